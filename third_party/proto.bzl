"""cc_proto: C++ code for .proto files through the system protoc (no protobuf source repo)."""

def cc_proto(name, srcs, deps = [], visibility = None):
    """Runs protoc --cpp_out over srcs and wraps the outputs in a cc_library."""
    hdrs = [s[:-len(".proto")] + ".pb.h" for s in srcs]
    ccs = [s[:-len(".proto")] + ".pb.cc" for s in srcs]
    native.genrule(
        name = name + "_gen",
        srcs = srcs,
        outs = hdrs + ccs,
        cmd = "protoc --proto_path=. --cpp_out=$(GENDIR) $(SRCS)",
    )
    native.cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        deps = deps + ["@system//:protobuf"],
        visibility = visibility,
    )
