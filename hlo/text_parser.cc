// Parser for XLA's HLO text: the module header, JAX's stack-frame sections,
// computations, instructions and their operands. Instructions are built
// directly into HloComputations as they are read; names are looked up per
// computation (operands must be defined before use, as in XLA), while
// computations may be named before they are defined: those references are
// resolved once the whole module has been read. Attributes and value syntax
// live in text_parser_attributes.cc, text_parser_structured.cc and
// text_parser_values.cc.
#include "hlo/text_parser.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "hlo/status_macros.h"
#include "hlo/text_parser_internal.h"

namespace hloc {
namespace text_internal {
namespace {

bool IsStackFrameSection(absl::string_view name) {
  return name == "FileNames" || name == "FunctionNames" || name == "FileLocations" ||
         name == "StackFrames";
}

// A module name from a file name: its base name without extension, with
// characters a name cannot hold replaced.
std::string ModuleNameFromFile(absl::string_view filename) {
  size_t slash = filename.rfind('/');
  if (slash != absl::string_view::npos) filename.remove_prefix(slash + 1);
  size_t dot = filename.find('.');
  if (dot != absl::string_view::npos && dot > 0) filename = filename.substr(0, dot);
  std::string name(filename);
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) c = '_';
  }
  if (name.empty() || !((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
                        name[0] == '_')) {
    name.insert(0, "m_");
  }
  return name;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HloModule>> Parser::ParseModule() {
  auto module = std::make_unique<HloModule>("");
  const bool has_header = AtName("HloModule");
  if (has_header) HLOC_RETURN_IF_ERROR(ParseModuleHeader(module.get()));
  HLOC_RETURN_IF_ERROR(ParseStackFrameSections(module.get()));
  if (At(TokenKind::kEof)) return Expected("a computation");
  while (!At(TokenKind::kEof)) HLOC_RETURN_IF_ERROR(ParseComputation());
  if (entry_ == nullptr) entry_ = computations_.back().get();
  if (!has_header) {
    module->set_name(options_.filename.empty() || options_.filename == "<text>"
                         ? absl::StrCat("module_", entry_->name())
                         : ModuleNameFromFile(options_.filename));
  }
  HLOC_RETURN_IF_ERROR(ResolveCallees());
  for (auto& computation : computations_) {
    if (computation.get() == entry_) {
      module->AddEntryComputation(std::move(computation));
    } else {
      module->AddComputation(std::move(computation));
    }
  }
  return module;
}

absl::Status Parser::ParseModuleHeader(HloModule* module) {
  lexer_.Next();  // HloModule
  if (!At(TokenKind::kName)) return Expected("a module name");
  module->set_name(std::string(tok().text));
  lexer_.Next();
  Eat(TokenKind::kColon);  // XLA's lexer reads "name:" as a name.
  HloModuleConfig* config = module->mutable_config();
  std::vector<absl::string_view> seen;
  while (Eat(TokenKind::kComma)) {
    const Token key = tok();
    if (key.kind != TokenKind::kName || key.percent) return Expected("a module attribute");
    if (std::find(seen.begin(), seen.end(), key.text) != seen.end()) {
      return ErrorAt(key.offset, absl::StrCat("module attribute '", key.text, "' appears twice"));
    }
    seen.push_back(key.text);
    lexer_.Next();
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, absl::StrCat("'=' after '", key.text, "'")));
    const absl::string_view k = key.text;
    if (k == "entry_computation_layout") {
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start the entry computation layout"));
      ProgramShape layout;
      HLOC_RETURN_IF_ERROR(ParseProgramShape(&layout));
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "'}' to end the entry computation layout"));
      config->entry_computation_layout = std::move(layout);
    } else if (k == "is_scheduled") {
      HLOC_RETURN_IF_ERROR(ParseBool(&config->is_scheduled));
    } else if (k == "replica_count" || k == "num_partitions") {
      const size_t offset = tok().offset;
      int64_t n;
      HLOC_RETURN_IF_ERROR(ParseInt64(&n));
      if (n < 1) return ErrorAt(offset, absl::StrCat(k, " must be at least 1"));
      (k == "replica_count" ? config->replica_count : config->num_partitions) = n;
    } else if (k == "alias_passthrough_params") {
      HLOC_RETURN_IF_ERROR(ParseBool(&config->alias_passthrough_params));
    } else if (k == "allow_spmd_sharding_propagation_to_parameters") {
      HLOC_RETURN_IF_ERROR(ParseBoolList(&config->allow_spmd_sharding_propagation_to_parameters));
    } else if (k == "allow_spmd_sharding_propagation_to_output") {
      HLOC_RETURN_IF_ERROR(ParseBoolList(&config->allow_spmd_sharding_propagation_to_output));
    } else if (k == "frontend_attributes") {
      HLOC_RETURN_IF_ERROR(ParseFrontendAttributes(&config->frontend_attributes));
    } else if (k == "input_output_alias") {
      // { {output}: (parameter, {index}, may-alias), ... }
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start input_output_alias"));
      if (!Eat(TokenKind::kRbrace)) {
        do {
          auto* entry = config->input_output_alias.add_entries();
          ShapeIndex index;
          HLOC_RETURN_IF_ERROR(ParseShapeIndex(&index));
          for (int64_t i : index) entry->add_output_shape_index(i);
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after the output index"));
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' before the parameter number"));
          int64_t parameter;
          HLOC_RETURN_IF_ERROR(ParseInt64(&parameter));
          entry->set_parameter_number(parameter);
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' after the parameter number"));
          HLOC_RETURN_IF_ERROR(ParseShapeIndex(&index));
          for (int64_t i : index) entry->add_parameter_shape_index(i);
          entry->set_kind(xla::MAY_ALIAS);
          if (Eat(TokenKind::kComma)) {
            if (AtName("must-alias")) {
              entry->set_kind(xla::MUST_ALIAS);
            } else if (!AtName("may-alias")) {
              return Expected("may-alias or must-alias");
            }
            lexer_.Next();
          }
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' to end an alias"));
        } while (Eat(TokenKind::kComma));
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "',' or '}' in input_output_alias"));
      }
    } else if (k == "buffer_donor") {
      // { (parameter, {index}), ... }
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start buffer_donor"));
      if (!Eat(TokenKind::kRbrace)) {
        do {
          auto* entry = config->buffer_donor.add_entries();
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' before the parameter number"));
          int64_t parameter;
          HLOC_RETURN_IF_ERROR(ParseInt64(&parameter));
          entry->set_parameter_number(parameter);
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kComma, "',' after the parameter number"));
          ShapeIndex index;
          HLOC_RETURN_IF_ERROR(ParseShapeIndex(&index));
          for (int64_t i : index) entry->add_parameter_shape_index(i);
          HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' to end a buffer donor"));
        } while (Eat(TokenKind::kComma));
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRbrace, "',' or '}' in buffer_donor"));
      }
    } else {
      return ErrorAt(key.offset, absl::StrCat("unknown module attribute '", k, "'"));
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseStackFrameSections(HloModule* module) {
  xla::StackFrameIndexProto* index = nullptr;
  while (At(TokenKind::kName) && !tok().percent && IsStackFrameSection(tok().text)) {
    const TokenKind after = lexer_.PeekNext().kind;
    if (after == TokenKind::kLparen || after == TokenKind::kLbrace) break;  // A computation.
    const absl::string_view section = tok().text;
    lexer_.Next();
    if (index == nullptr) index = module->mutable_config()->carried.mutable_stack_frame_index();
    int64_t count = 0;
    while (At(TokenKind::kInt)) {
      const size_t offset = tok().offset;
      int64_t id;
      HLOC_RETURN_IF_ERROR(ParseInt64(&id));
      if (id != ++count) {
        return ErrorAt(offset, absl::StrCat("expected entry ", count, " of ", section));
      }
      if (section == "FileNames") {
        HLOC_RETURN_IF_ERROR(ParseString(index->add_file_names()));
        continue;
      }
      if (section == "FunctionNames") {
        HLOC_RETURN_IF_ERROR(ParseString(index->add_function_names()));
        continue;
      }
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLbrace, "'{' to start an entry"));
      auto* location = section == "FileLocations" ? index->add_file_locations() : nullptr;
      auto* frame = location == nullptr ? index->add_stack_frames() : nullptr;
      while (!At(TokenKind::kRbrace)) {
        Eat(TokenKind::kComma);
        const Token key = tok();
        if (key.kind != TokenKind::kName) return Expected("a field name");
        lexer_.Next();
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after a field name"));
        int32_t v;
        HLOC_RETURN_IF_ERROR(ParseInt32(&v));
        const absl::string_view k = key.text;
        if (location != nullptr && k == "file_name_id")
          location->set_file_name_id(v);
        else if (location != nullptr && k == "function_name_id")
          location->set_function_name_id(v);
        else if (location != nullptr && k == "line")
          location->set_line(v);
        else if (location != nullptr && k == "end_line")
          location->set_end_line(v);
        else if (location != nullptr && k == "column")
          location->set_column(v);
        else if (location != nullptr && k == "end_column")
          location->set_end_column(v);
        else if (frame != nullptr && k == "file_location_id")
          frame->set_file_location_id(v);
        // The text counts parents from 1 where the proto counts from 0.
        else if (frame != nullptr && k == "parent_frame_id")
          frame->set_parent_frame_id(v - 1);
        else
          return ErrorAt(key.offset, absl::StrCat("unknown field '", k, "' in ", section));
      }
      lexer_.Next();
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::ParseComputation() {
  const bool is_entry = AtName("ENTRY") && lexer_.PeekNext().kind == TokenKind::kName;
  const size_t entry_offset = tok().offset;
  if (is_entry) lexer_.Next();
  if (!At(TokenKind::kName)) return Expected("a computation name");
  const Token name = tok();
  if (computation_by_name_.contains(name.text)) {
    return ErrorAt(name.offset, absl::StrCat("computation %", name.text, " is defined twice"));
  }
  lexer_.Next();
  if (Eat(TokenKind::kLparen)) {
    // The signature repeats what the parameters and root say; it is read and
    // checked for syntax only.
    if (!Eat(TokenKind::kRparen)) {
      do {
        if (!At(TokenKind::kName)) return Expected("a parameter name");
        lexer_.Next();
        HLOC_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':' after a parameter name"));
        Shape shape;
        HLOC_RETURN_IF_ERROR(ParseValidatedShape(&shape));
      } while (Eat(TokenKind::kComma));
      HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "',' or ')' in the parameter list"));
    }
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kArrow, "'->' after the parameter list"));
    Shape result;
    HLOC_RETURN_IF_ERROR(ParseValidatedShape(&result));
  }
  if (!At(TokenKind::kLbrace)) {
    return ErrorAt(name.offset, absl::StrCat("expected '{' to start the body of computation '",
                                             name.text, "', got ", DescribeToken(tok())));
  }
  lexer_.Next();
  auto computation = std::make_unique<HloComputation>(std::string(name.text));
  names_.clear();
  HloInstruction* root = nullptr;
  HloInstruction* last = nullptr;
  while (!At(TokenKind::kRbrace)) {
    if (At(TokenKind::kEof)) return Expected("an instruction or '}'");
    HLOC_RETURN_IF_ERROR(ParseInstruction(computation.get(), &root, &last));
  }
  if (last == nullptr) {
    return ErrorAt(tok().offset, absl::StrCat("computation %", name.text, " has no instructions"));
  }
  lexer_.Next();
  computation->set_root(root != nullptr ? root : last);
  const auto& parameters = computation->parameters();
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i] == nullptr) {
      return ErrorAt(name.offset,
                     absl::StrCat("computation %", name.text, " has parameter(",
                                  parameters.size() - 1, ") but no parameter(", i, ")"));
    }
  }
  // `, execution_thread="name"` may follow the body.
  while (At(TokenKind::kComma) && lexer_.PeekNext().kind == TokenKind::kName) {
    lexer_.Next();
    if (!AtName("execution_thread")) {
      return ErrorAt(tok().offset,
                     absl::StrCat("unknown computation attribute '", tok().text, "'"));
    }
    lexer_.Next();
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after execution_thread"));
    std::string thread;
    HLOC_RETURN_IF_ERROR(ParseString(&thread));
    computation->set_execution_thread(std::move(thread));
  }
  if (is_entry) {
    if (entry_ != nullptr) return ErrorAt(entry_offset, "a module has only one ENTRY computation");
    entry_ = computation.get();
  }
  computation_by_name_[name.text] = computation.get();
  computations_.push_back(std::move(computation));
  return absl::OkStatus();
}

absl::StatusOr<HloInstruction*> Parser::LookupInstruction(const Token& name_token) {
  auto it = names_.find(name_token.text);
  if (it == names_.end()) {
    return ErrorAt(name_token.offset,
                   absl::StrCat("instruction %", name_token.text,
                                " is not defined (operands must be defined before use)"));
  }
  return it->second;
}

absl::Status Parser::ParseInstruction(HloComputation* computation, HloInstruction** root,
                                      HloInstruction** last) {
  const size_t root_offset = tok().offset;
  const bool is_root = AtName("ROOT") && lexer_.PeekNext().kind == TokenKind::kName;
  if (is_root) lexer_.Next();
  if (!At(TokenKind::kName)) return Expected("an instruction name");
  const Token name = tok();
  if (names_.contains(name.text)) {
    return ErrorAt(name.offset,
                   absl::StrCat("instruction %", name.text, " is defined twice in computation %",
                                computation->name()));
  }
  lexer_.Next();
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'=' after the instruction name"));
  const bool shape_given = AtShape();
  Shape shape;
  if (shape_given) HLOC_RETURN_IF_ERROR(ParseValidatedShape(&shape));
  HLOC_ASSIGN_OR_RETURN(
      HloInstruction * added,
      ParseInstructionRhs(computation, name.text, name.offset, shape_given ? &shape : nullptr,
                          /*allow_attributes=*/true));
  names_.emplace(name.text, added);
  if (is_root) {
    if (*root != nullptr) {
      return ErrorAt(root_offset,
                     absl::StrCat("computation %", computation->name(), " has more than one ROOT"));
    }
    *root = added;
  }
  *last = added;
  return absl::OkStatus();
}

absl::StatusOr<HloInstruction*> Parser::ParseInstructionRhs(HloComputation* computation,
                                                            absl::string_view name,
                                                            size_t name_offset, Shape* shape,
                                                            bool allow_attributes) {
  DepthGuard guard(this);
  HLOC_RETURN_IF_ERROR(CheckDepth());
  if (!At(TokenKind::kName) || tok().percent) return Expected("an opcode");
  const std::optional<HloOpcode> opcode = HloOpcodeFromName(tok().text);
  if (!opcode) {
    return ErrorAt(tok().offset,
                   absl::StrCat("unknown opcode '", tok().text, "' (expected an HLO opcode)"));
  }
  const size_t opcode_offset = tok().offset;
  lexer_.Next();
  // Nested instructions have no name of their own.
  std::string generated_name;
  if (name.empty()) {
    generated_name = absl::StrCat(HloOpcodeName(*opcode), ".anon");
    name = generated_name;
  }
  InstructionContext context;
  context.name = name;
  context.offset = name_offset;
  context.shape_given = shape != nullptr;
  Shape result_shape;
  if (shape != nullptr) result_shape = std::move(*shape);
  if (!context.shape_given &&
      (*opcode == HloOpcode::kParameter || *opcode == HloOpcode::kConstant)) {
    return ErrorAt(opcode_offset, absl::StrCat("expected a shape before '", HloOpcodeName(*opcode),
                                               "': ", HloOpcodeName(*opcode), " instruction %",
                                               name, " needs its result shape"));
  }

  std::unique_ptr<HloInstruction> instruction;
  if (*opcode == HloOpcode::kParameter) {
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' before the parameter number"));
    const size_t offset = tok().offset;
    int64_t number;
    HLOC_RETURN_IF_ERROR(ParseInt64(&number));
    // Parameters 0..number-1 must all be written too, so a number beyond the
    // text's length cannot be valid; refusing it bounds the parameter table.
    if (number < 0 || number >= (int64_t{1} << 24) ||
        static_cast<uint64_t>(number) > lexer_.end()) {
      return ErrorAt(offset, absl::StrCat("parameter number ", number, " is out of range"));
    }
    if (number < computation->num_parameters() && computation->parameter(number) != nullptr) {
      return ErrorAt(offset, absl::StrCat("parameter(", number, ") appears twice in computation %",
                                          computation->name()));
    }
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the parameter number"));
    instruction =
        HloInstruction::CreateParameter(number, std::move(result_shape), std::string(name));
  } else if (*opcode == HloOpcode::kConstant) {
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' before the constant's value"));
    Literal literal;
    HLOC_RETURN_IF_ERROR(ParseLiteral(result_shape, &literal));
    HLOC_RETURN_IF_ERROR(Expect(TokenKind::kRparen, "')' after the constant's value"));
    instruction = HloInstruction::CreateConstant(std::move(literal));
    instruction->set_shape(std::move(result_shape));
    instruction->set_name(std::string(name));
  } else {
    const size_t operands_offset = tok().offset;
    std::vector<HloInstruction*> operands;
    HLOC_RETURN_IF_ERROR(ParseOperands(computation, &context, &operands));
    const int arity = HloOpcodeArity(*opcode);
    if (arity >= 0 && static_cast<int>(operands.size()) != arity) {
      return ErrorAt(operands_offset,
                     absl::StrCat(HloOpcodeName(*opcode), " takes ", arity, " operand",
                                  arity == 1 ? "" : "s", ", got ", operands.size()));
    }
    instruction = HloInstruction::Create(*opcode, std::move(result_shape), operands);
    instruction->set_name(std::string(name));
  }
  HloInstruction* added = computation->AddInstruction(std::move(instruction));
  context.instruction = added;
  if (allow_attributes) HLOC_RETURN_IF_ERROR(ParseAttributes(&context));
  HLOC_RETURN_IF_ERROR(CheckRequiredAttributes(context));
  HLOC_RETURN_IF_ERROR(PlaceCallees(&context));
  if (!context.shape_given) HLOC_RETURN_IF_ERROR(InferShape(&context));
  return added;
}

absl::Status Parser::ParseOperands(HloComputation* computation, InstructionContext* context,
                                   std::vector<HloInstruction*>* operands) {
  HLOC_RETURN_IF_ERROR(Expect(TokenKind::kLparen, "'(' to start the operands"));
  if (Eat(TokenKind::kRparen)) return absl::OkStatus();
  Shape declared;
  do {
    const size_t offset = tok().offset;
    const bool has_shape = AtShape();
    if (has_shape) HLOC_RETURN_IF_ERROR(ParseShape(&declared));
    if (!At(TokenKind::kName)) return Expected("an operand name");
    if (lexer_.NextCharIs('(') && !tok().percent) {
      // A nested instruction, `opcode(operands)`, without a name or attributes.
      if (has_shape) {
        absl::Status valid = ValidateShape(declared);
        if (!valid.ok()) return ErrorAt(offset, valid.message());
      }
      HLOC_ASSIGN_OR_RETURN(
          HloInstruction * nested,
          ParseInstructionRhs(computation, "", offset, has_shape ? &declared : nullptr,
                              /*allow_attributes=*/false));
      operands->push_back(nested);
      continue;
    }
    HLOC_ASSIGN_OR_RETURN(HloInstruction * operand, LookupInstruction(tok()));
    if (has_shape && !declared.Compatible(operand->shape())) {
      return ErrorAt(offset, absl::StrCat("operand %", operand->name(), " of %", context->name,
                                          " is written with shape ", declared.ToString(),
                                          " but has shape ", operand->shape().ToString()));
    }
    lexer_.Next();
    operands->push_back(operand);
  } while (Eat(TokenKind::kComma));
  return Expect(TokenKind::kRparen, "',' or ')' after an operand");
}

absl::Status Parser::InferShape(InstructionContext* context) {
  HloInstruction* instruction = context->instruction;
  const HloOpcode op = instruction->opcode();
  auto cannot = [&](absl::string_view why) {
    return ErrorAt(context->offset,
                   absl::StrCat("cannot infer the shape of ", HloOpcodeName(op), " instruction %",
                                context->name, why, "; write its result shape"));
  };
  auto operand_shape = [&](int64_t i) -> const Shape& { return instruction->operand(i)->shape(); };
  const int64_t n = instruction->operand_count();
  Shape shape;
  if ((IsElementwiseUnary(op) && op != HloOpcode::kConvert && op != HloOpcode::kBitcastConvert) ||
      op == HloOpcode::kCopy || op == HloOpcode::kOptimizationBarrier ||
      op == HloOpcode::kAddDependency || op == HloOpcode::kDomain || op == HloOpcode::kReverse) {
    shape = operand_shape(0);
    const PrimitiveType type = shape.element_type();
    if (op == HloOpcode::kIsFinite) shape.set_element_type(xla::PRED);
    if ((op == HloOpcode::kAbs || op == HloOpcode::kReal || op == HloOpcode::kImag) &&
        IsComplex(type)) {
      shape.set_element_type(ComplexComponentType(type));
    }
  } else if (IsElementwiseBinary(op) && op != HloOpcode::kStochasticConvert) {
    shape = operand_shape(0);
    if (op == HloOpcode::kCompare) shape.set_element_type(xla::PRED);
    if (op == HloOpcode::kComplex) {
      shape.set_element_type(shape.element_type() == xla::F64 ? xla::C128 : xla::C64);
    }
  } else if (op == HloOpcode::kSelect || op == HloOpcode::kClamp) {
    shape = operand_shape(1);
  } else if (op == HloOpcode::kTuple) {
    std::vector<Shape> elements;
    for (int64_t i = 0; i < n; ++i) elements.push_back(operand_shape(i));
    shape = Shape::Tuple(std::move(elements));
  } else if (op == HloOpcode::kGetTupleElement) {
    const Shape& tuple = operand_shape(0);
    const int64_t index = instruction->tuple_index();
    if (!tuple.IsTuple() || index < 0 || index >= tuple.tuple_shapes_size()) {
      return cannot(": index is out of range for its operand");
    }
    shape = tuple.tuple_shapes(index);
  } else if (op == HloOpcode::kAfterAll) {
    shape = Shape::Token();
  } else if (op == HloOpcode::kPartitionId || op == HloOpcode::kReplicaId) {
    shape = Shape::Scalar(xla::U32);
  } else if (op == HloOpcode::kSort) {
    if (n == 1) {
      shape = operand_shape(0);
    } else {
      std::vector<Shape> elements;
      for (int64_t i = 0; i < n; ++i) elements.push_back(operand_shape(i));
      shape = Shape::Tuple(std::move(elements));
    }
  } else if (op == HloOpcode::kTranspose) {
    const Shape& in = operand_shape(0);
    const std::vector<int64_t>& perm = instruction->dimensions();
    if (!in.IsArray() || static_cast<int64_t>(perm.size()) != in.rank()) {
      return cannot(": dimensions do not match its operand's rank");
    }
    shape = Shape(in.element_type(), {});
    for (int64_t d : perm) {
      if (d < 0 || d >= in.rank()) return cannot(": dimensions are out of range");
      shape.add_dimension(in.dimensions(d), in.is_dynamic_dimension(d));
    }
  } else if (op == HloOpcode::kReduce) {
    if (n == 0 || n % 2 != 0) return cannot(": it needs inputs and as many init values");
    std::vector<Shape> results;
    for (int64_t k = 0; k < n / 2; ++k) {
      const Shape& in = operand_shape(k);
      if (!in.IsArray()) return cannot(": an input is not an array");
      Shape out(operand_shape(n / 2 + k).element_type(), {});
      for (int64_t d = 0; d < in.rank(); ++d) {
        const auto& reduced = instruction->dimensions();
        if (std::find(reduced.begin(), reduced.end(), d) == reduced.end()) {
          out.add_dimension(in.dimensions(d), in.is_dynamic_dimension(d));
        }
      }
      results.push_back(std::move(out));
    }
    shape = results.size() == 1 ? std::move(results[0]) : Shape::Tuple(std::move(results));
  } else {
    return cannot("");
  }
  instruction->set_shape(std::move(shape));
  return absl::OkStatus();
}

absl::Status Parser::ResolveCallees() {
  for (const PendingCallee& pending : pending_callees_) {
    auto it = computation_by_name_.find(pending.ref.name);
    if (it == computation_by_name_.end()) {
      return ErrorAt(pending.ref.offset,
                     absl::StrCat("computation %", pending.ref.name, " is not defined"));
    }
    pending.instruction->set_called_computation(pending.slot, it->second);
  }
  for (const auto& [scan, offset] : scans_without_carry_count_) {
    HLOC_RETURN_IF_ERROR(InferScanCarryCount(scan, offset));
  }
  for (const auto& computation : computations_) {
    for (HloInstruction* instruction : computation->instructions()) {
      const HloOpcode op = instruction->opcode();
      // async-update/done run the computation of the async-start they follow.
      if ((op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone) &&
          instruction->called_computations().empty() && instruction->operand_count() == 1 &&
          instruction->operand(0)->called_computations().size() == 1 &&
          (instruction->operand(0)->opcode() == HloOpcode::kAsyncStart ||
           instruction->operand(0)->opcode() == HloOpcode::kAsyncUpdate)) {
        instruction->AppendCalledComputation(instruction->operand(0)->called_computations()[0]);
      }
      if (op == HloOpcode::kFusion && instruction->fused_computation() != nullptr) {
        HloComputation* fused = instruction->fused_computation();
        if (fused->fusion_instruction() != nullptr) {
          return absl::InvalidArgumentError(
              absl::StrCat(options_.filename, ": computation %", fused->name(),
                           " is the fused computation of both %",
                           fused->fusion_instruction()->name(), " and %", instruction->name()));
        }
        fused->set_fusion_instruction(instruction);
      }
    }
  }
  return absl::OkStatus();
}

// XLA prints num_carries= on every scan, but its earliest scan tests leave it
// out. The carries are then the trailing operands that to_apply takes whole;
// an input reaches it one rank lower (without the scan dimension), so the
// ranks decide.
absl::Status Parser::InferScanCarryCount(HloInstruction* scan, size_t offset) {
  const HloComputation* to_apply = scan->to_apply();
  const int64_t count = scan->operand_count();
  auto fail = [&](absl::string_view why) {
    return ErrorAt(offset, absl::StrCat("scan %", scan->name(), " has no num_carries and ", why,
                                        "; give num_carries="));
  };
  if (to_apply == nullptr || to_apply->num_parameters() != count) {
    return fail("to_apply does not take one parameter per operand");
  }
  int64_t carries = 0;
  bool in_inputs = false;
  for (int64_t i = count - 1; i >= 0; --i) {
    const HloInstruction* parameter = to_apply->parameter(i);
    const Shape& operand = scan->operand(i)->shape();
    if (parameter == nullptr || !operand.IsArray() || !parameter->shape().IsArray()) {
      return fail("its operands or to_apply's parameters are not all arrays");
    }
    const bool whole = parameter->shape().rank() == operand.rank();
    if (!whole && parameter->shape().rank() != operand.rank() - 1) {
      return fail(absl::StrCat("to_apply parameter ", i, " fits neither an input nor a carry"));
    }
    if (whole && in_inputs) return fail("a carry comes before an input");
    if (whole) {
      ++carries;
    } else {
      in_inputs = true;
    }
  }
  if (!in_inputs) return fail("no operand is an input");
  scan->mutable_attrs()->num_carries = carries;
  return absl::OkStatus();
}

absl::Status Parser::ExpectEnd() {
  if (!At(TokenKind::kEof)) return Expected("end of input");
  return absl::OkStatus();
}

}  // namespace text_internal

absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(absl::string_view text,
                                                          const ParseOptions& options) {
  text_internal::Parser parser(text, 0, text.size(), options);
  return parser.ParseModule();
}

std::vector<absl::StatusOr<std::unique_ptr<HloModule>>> ParseEachHloModule(
    absl::string_view text, const ParseOptions& options) {
  std::vector<absl::StatusOr<std::unique_ptr<HloModule>>> results;
  // Each piece is lexed in place, so its errors carry whole-file lines.
  auto parse_piece = [&](size_t begin, size_t end) {
    if (Lexer(text, begin, end).kind() == TokenKind::kEof) return;
    text_internal::Parser parser(text, begin, end, options);
    results.push_back(parser.ParseModule());
  };
  size_t piece_begin = 0;
  size_t line_begin = 0;
  while (line_begin < text.size()) {
    size_t line_end = text.find('\n', line_begin);
    if (line_end == absl::string_view::npos) line_end = text.size();
    absl::string_view line = text.substr(line_begin, line_end - line_begin);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    if (line == "// -----") {
      parse_piece(piece_begin, line_begin);
      piece_begin = line_end;
    }
    line_begin = line_end + 1;
  }
  parse_piece(piece_begin, text.size());
  return results;
}

absl::StatusOr<std::vector<std::unique_ptr<HloModule>>> ParseHloModules(
    absl::string_view text, const ParseOptions& options) {
  std::vector<std::unique_ptr<HloModule>> modules;
  for (auto& result : ParseEachHloModule(text, options)) {
    if (!result.ok()) return result.status();
    modules.push_back(std::move(result).value());
  }
  if (modules.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(options.filename, ": no HLO module found"));
  }
  return modules;
}

absl::StatusOr<Shape> ParseShape(absl::string_view text) {
  ParseOptions options;
  options.filename = "<shape>";
  text_internal::Parser parser(text, 0, text.size(), options);
  Shape shape;
  HLOC_RETURN_IF_ERROR(parser.ParseValidatedShape(&shape));
  HLOC_RETURN_IF_ERROR(parser.ExpectEnd());
  return shape;
}

absl::StatusOr<Literal> ParseLiteral(absl::string_view text, const Shape& shape) {
  HLOC_RETURN_IF_ERROR(ValidateShape(shape));
  ParseOptions options;
  options.filename = "<literal>";
  text_internal::Parser parser(text, 0, text.size(), options);
  Literal literal;
  HLOC_RETURN_IF_ERROR(parser.ParseLiteral(shape, &literal));
  HLOC_RETURN_IF_ERROR(parser.ExpectEnd());
  return literal;
}

}  // namespace hloc
