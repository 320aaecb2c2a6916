// The library epilogue fusion pass: find what a gemm/convolution call can
// absorb, check it, move it into the call's body (see
// library_epilogue_fusion.h).
#include "passes/outlining/library_epilogue_fusion.h"

#include <algorithm>
#include <deque>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hlo/status_macros.h"
#include "passes/outlining/composite_attributes.h"
#include "passes/outlining/elementwise_function.h"
#include "passes/outlining/library_checks.h"
#include "passes/outlining/library_epilogues.h"
#include "passes/outlining/outline_library_calls.h"

namespace hloc {
namespace {

using pattern::Any;
using pattern::AnyOf;
using pattern::AnySplatConstant;
using pattern::BroadcastChain;
using pattern::Capture;
using pattern::Match;
using pattern::Op;
using pattern::Pattern;

// What the pass knows about one library call.
struct LibraryCall {
  const LibraryEpilogueFamily* family = nullptr;
  HloComputation* body = nullptr;
  HloInstruction* op = nullptr;  // the dot or convolution in the body
  CompositeAttributes attributes;
  std::vector<EpilogueStep> steps;
  double alpha = 1;
  int64_t feature_dimension = 0;  // of the call's result
};

// One absorption, found and checked, waiting to be applied.
struct Absorption {
  std::string what;  // "bias", "alpha", "operand alpha", ...
  std::optional<EpilogueStep> step;
  double alpha_factor = 1;
  // Consumer side: the instruction whose value the call computes afterwards,
  // and the caller instructions copied into the body.
  HloInstruction* root = nullptr;
  std::vector<HloInstruction*> members;
  HloInstruction* vector = nullptr;  // a new vector operand, when the step reads one
  // Producer side: operand `operand_index` of the call is multiply(input, c).
  int64_t operand_index = -1;
  HloInstruction* scaled_input = nullptr;
  std::string numerics;
};

// The outcome of looking for an absorption: one, a refusal, or nothing worth
// a ledger entry (no users).
struct Search {
  std::optional<Absorption> found;
  std::string refusal;
  std::vector<std::string> subjects;
};

bool IsCheap(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
      return true;
    default:
      return false;
  }
}

Pattern TheCall(const HloInstruction* call) {
  return Any().Where([call](const HloInstruction& i) { return &i == call; }, "the library call");
}

Refusal ReadLibraryCall(HloInstruction* call, const LibraryEpilogueFamily* family,
                        LibraryCall* out) {
  out->family = family;
  const std::string* text = call->FindFrontendAttribute(kCompositeAttributes);
  absl::StatusOr<CompositeAttributes> attributes =
      CompositeAttributes::Parse(text == nullptr || text->empty() ? "{}" : *text);
  if (!attributes.ok()) return std::string(attributes.status().message());
  out->attributes = *std::move(attributes);
  std::string epilogue = out->attributes.GetString("epilogue").value_or("none");
  absl::StatusOr<std::vector<EpilogueStep>> steps = ParseEpilogue(epilogue);
  if (!steps.ok()) return std::string(steps.status().message());
  out->steps = *std::move(steps);
  const std::string& name = *LibraryCallName(*call);
  std::string expected = EpilogueCompositeName(*family, out->steps);
  if (name != expected) {
    return absl::StrCat("composite.name ", name, " does not match its epilogue \"", epilogue,
                        "\" (", expected, ")");
  }
  out->alpha = out->attributes.GetFloat("alpha").value_or(1.0);
  out->body = call->to_apply();
  if (out->body == nullptr || out->body->root() == nullptr ||
      !out->body->root()->shape().IsArray()) {
    return std::string("its body does not return one array");
  }
  if (call->parent()->parent()->CallersOf(out->body).size() != 1) {
    return absl::StrCat("its body ", out->body->name(), " is shared with other calls");
  }
  int64_t ops = 0;
  out->body->ForEachInstruction([&](HloInstruction* i) {
    if (i->opcode() == HloOpcode::kDot || i->opcode() == HloOpcode::kConvolution) {
      out->op = i;
      ++ops;
    }
  });
  if (ops != 1) return absl::StrCat("its body has ", ops, " dots/convolutions, not one");
  out->feature_dimension =
      out->op->opcode() == HloOpcode::kConvolution
          ? out->op->attrs().convolution_dimension_numbers->output_feature_dimension()
          : call->shape().rank() - 1;
  return std::nullopt;
}

std::vector<std::string> Names(const HloInstruction* first,
                               const std::vector<HloInstruction*>& rest) {
  std::vector<std::string> names = {first->name()};
  for (const HloInstruction* i : rest) {
    if (i != first) names.push_back(i->name());
  }
  return names;
}

class AbsorptionFinder {
 public:
  AbsorptionFinder(HloInstruction* call, const LibraryCall& library, const FusionRules& rules,
                   const LibraryCheckOptions& check)
      : call_(call), library_(library), rules_(rules), check_(check) {}

  // Producer side first (it never changes the result's users), then the
  // consumer side.
  Search Find() {
    Search producer = FindScaledOperand();
    if (producer.found.has_value()) return producer;
    Search consumer = FindConsumer();
    if (consumer.found.has_value() || !consumer.refusal.empty()) return consumer;
    return producer;
  }

 private:
  std::string Numerics(EpilogueStep step) const {
    switch (step) {
      case EpilogueStep::kSub:
      case EpilogueStep::kScale:
        return "per-channel step; a library may fold sub/scale/bias into y*s + (b - m*s): "
               "absolute error within a few ulp of max(|y*s|, |m*s|, |b|)";
      case EpilogueStep::kBias:
        return "bias added by the library's epilogue, one rounding as in the HLO";
      case EpilogueStep::kRelu:
        return "relu applied by the library's epilogue (exact)";
      default:
        return "GELU evaluated by the library in the recorded form (tanh or erf)";
    }
  }

  // operand k (lhs/rhs, input/kernel) = multiply(x, c), c a constant splat.
  Search FindScaledOperand() {
    Search search;
    for (int64_t k = 0; k < 2 && k < call_->operand_count(); ++k) {
      HloInstruction* scaled = call_->operand(k);
      Match m;
      Pattern p = Op(HloOpcode::kMultiply)
                      .WithOperands(Capture("x"), Capture("c", AnySplatConstant()))
                      .Commutative();
      if (!pattern::Matches(scaled, p, &m)) continue;
      search.subjects = {call_->name(), scaled->name()};
      HloInstruction* parameter = library_.body->parameter(k);
      if (parameter->user_count() != 1 || parameter->users()[0] != library_.op ||
          library_.op->OperandIndex(parameter) != k ||
          library_.op->operand(1 - k) == parameter) {
        search.refusal = absl::StrCat("operand ", k, " (", scaled->name(),
                                      ") is not read by the library op alone as its operand ", k);
        continue;
      }
      if (scaled->user_count() != 1 || call_->OperandIndex(scaled) != k ||
          std::count(call_->operands().begin(), call_->operands().end(), scaled) != 1) {
        search.refusal = absl::StrCat("scaled operand ", scaled->name(), " has other users");
        continue;
      }
      HloInstruction* x = m.Get("x");
      if (x->shape().element_type() != scaled->shape().element_type() ||
          x->shape().dimensions() != scaled->shape().dimensions()) {
        search.refusal = absl::StrCat(scaled->name(), " changes the shape of ", x->name());
        continue;
      }
      if (!(check_.require_row_major_layouts ? IsRowMajor(x->shape())
                                             : IsDenseStrided(x->shape()))) {
        search.refusal = absl::StrCat(x->name(), " has a layout the library cannot read");
        continue;
      }
      Refusal forbidden = CheckRulesAndEdges(m.members(), scaled);
      if (forbidden.has_value()) {
        search.refusal = *forbidden;
        continue;
      }
      std::optional<double> c = pattern::SplatValue(m.Get("c"));
      if (!c.has_value()) continue;
      Absorption a;
      a.what = "operand alpha";
      a.alpha_factor = *c;
      a.members = m.members();
      a.operand_index = k;
      a.scaled_input = x;
      a.numerics =
          "(c*x).w computed as c*(x.w): the scaled operand is not rounded (exact when c is a "
          "power of two)";
      search.found = std::move(a);
      search.refusal.clear();
      return search;
    }
    return search;
  }

  Search FindConsumer() {
    Search search;
    HloComputation* computation = call_->parent();
    if (call_->users().empty()) return search;
    if (call_ == computation->root()) {
      search.subjects = {call_->name()};
      search.refusal = "its result is also the computation's result";
      return search;
    }
    if (call_->user_count() > 1) {
      std::optional<Absorption> gelu = FindGelu(&search);
      if (gelu.has_value()) {
        search.found = std::move(gelu);
        search.refusal.clear();
      } else if (search.refusal.empty()) {
        search.subjects = {call_->name()};
        search.refusal = absl::StrCat("its result has ", call_->user_count(),
                                      " users and they are no GELU of it");
      }
      return search;
    }
    HloInstruction* user = call_->users()[0];
    search.subjects = {call_->name(), user->name()};
    Pattern x = TheCall(call_);
    Match m;
    // Scalar scale: alpha.
    if (pattern::Matches(user,
                         Op(HloOpcode::kMultiply)
                             .WithOperands(x, Capture("c", AnySplatConstant()))
                             .Commutative(),
                         &m) ||
        pattern::Matches(
            user, Op(HloOpcode::kDivide).WithOperands(x, Capture("c", AnySplatConstant())), &m)) {
      std::optional<double> c = pattern::SplatValue(m.Get("c"));
      bool divide = user->opcode() == HloOpcode::kDivide;
      if (!library_.steps.empty()) {
        search.refusal = absl::StrCat(
            "a scale after the '", EpilogueToString(library_.steps),
            "' epilogue: alpha scales the product before the epilogue, not after it");
      } else if (!c.has_value() || (divide && *c == 0)) {
        search.refusal = absl::StrCat(user->name(), " divides by zero");
      } else if (Refusal r = CheckConsumer(m.members(), user); r.has_value()) {
        search.refusal = *r;
      } else {
        Absorption a;
        a.what = "alpha";
        a.alpha_factor = divide ? 1 / *c : *c;
        a.root = user;
        a.members = m.members();
        a.numerics = divide ? "y/c applied as alpha = 1/c: within 2 ulp of the division, exact "
                              "when c is a power of two"
                            : "y*c applied as alpha: one rounding of alpha*y, as in the HLO";
        search.found = std::move(a);
      }
      return search;
    }
    // maximum(call, 0): relu.
    if (pattern::Matches(
            user,
            Op(HloOpcode::kMaximum).WithOperands(x, pattern::SplatConstant(0)).Commutative(),
            &m)) {
      return Finish(EpilogueStep::kRelu, user, m, nullptr, nullptr, search);
    }
    // A vector along the output feature: bias, sub, scale.
    struct VectorForm {
      HloOpcode opcode;
      EpilogueStep step;
      bool commutative;
    };
    for (const VectorForm& form :
         {VectorForm{HloOpcode::kAdd, EpilogueStep::kBias, true},
          VectorForm{HloOpcode::kSubtract, EpilogueStep::kSub, false},
          VectorForm{HloOpcode::kMultiply, EpilogueStep::kScale, true}}) {
      Pattern vector =
          Capture("broadcast", BroadcastChain(Capture("vector", Any().WithRank(1))));
      Pattern p = Op(form.opcode).WithOperands(x, vector);
      if (form.commutative) p = p.Commutative();
      if (pattern::Matches(user, p, &m)) {
        return Finish(form.step, user, m, m.Get("vector"), m.Get("broadcast"), search);
      }
    }
    search.refusal = absl::StrCat("its only user ", user->name(), " (",
                                  HloOpcodeName(user->opcode()),
                                  ") is no epilogue step the library fuses");
    return search;
  }

  Search Finish(EpilogueStep step, HloInstruction* user, const Match& m, HloInstruction* vector,
                HloInstruction* broadcast, Search search) {
    std::vector<EpilogueStep> steps = library_.steps;
    steps.push_back(step);
    if (Refusal r = CheckEpilogueSteps(*library_.family, steps); r.has_value()) {
      search.refusal = *r;
      return search;
    }
    if (vector != nullptr) {
      Refusal r = CheckVectorAlong(broadcast, vector, library_.feature_dimension, user->shape(),
                                   EpilogueStepToken(step));
      if (r.has_value()) {
        search.refusal = *r;
        return search;
      }
    }
    if (Refusal r = CheckConsumer(m.members(), user); r.has_value()) {
      search.refusal = *r;
      return search;
    }
    Absorption a;
    a.what = std::string(EpilogueStepToken(step));
    a.step = step;
    a.root = user;
    a.members = m.members();
    a.vector = vector;
    a.numerics = Numerics(step);
    search.found = std::move(a);
    return search;
  }

  // GELU of the call: x * cdf(x) or (x * c) * erfc(..x..), as gemm_bias_gelu.
  std::optional<Absorption> FindGelu(Search* search) {
    Pattern x = TheCall(call_);
    Pattern half_x =
        Op(HloOpcode::kMultiply).WithOperands(x, AnySplatConstant()).Commutative();
    Pattern gelu = Op(HloOpcode::kMultiply)
                       .WithOperands(AnyOf({x, half_x}), pattern::ElementwiseOf(x))
                       .Commutative();
    // Multiplies reachable through elementwise users, nearest first.
    std::deque<HloInstruction*> queue(call_->users().begin(), call_->users().end());
    absl::flat_hash_set<HloInstruction*> seen(queue.begin(), queue.end());
    std::optional<Match> best;
    std::string best_form;
    while (!queue.empty() && seen.size() < 512) {
      HloInstruction* i = queue.front();
      queue.pop_front();
      if (!i->IsElementwise()) continue;
      for (HloInstruction* user : i->users()) {
        if (seen.insert(user).second) queue.push_back(user);
      }
      Match m;
      if (i->opcode() != HloOpcode::kMultiply || !pattern::Matches(i, gelu, &m)) continue;
      bool covers = true;
      for (const HloInstruction* user : call_->users()) covers &= m.IsMember(user);
      if (!covers) continue;
      absl::StatusOr<Identification> form =
          IdentifyElementwiseFunction(i, call_, GeluReferences());
      if (!form.ok() || form->name.empty()) continue;
      if (!best.has_value() || m.members().size() > best->members().size()) {
        best = m;
        best_form = form->name;
      }
    }
    if (!best.has_value()) return std::nullopt;
    EpilogueStep step =
        best_form == "gelu_erf" ? EpilogueStep::kGeluErf : EpilogueStep::kGeluTanh;
    Search finished = Finish(step, best->root(), *best, nullptr, nullptr, *search);
    *search = finished;
    search->subjects = Names(call_, best->members());
    return finished.found;
  }

  // The fusion rules allow every member, none has control edges, and values
  // other than `root` that are not cheap to copy are used only by members.
  Refusal CheckRulesAndEdges(const std::vector<HloInstruction*>& members,
                             const HloInstruction* root) const {
    absl::flat_hash_set<const HloInstruction*> set(members.begin(), members.end());
    for (const HloInstruction* m : members) {
      NodeTraits traits = rules_.Describe(*m);
      if (!traits.fusible) {
        return absl::StrCat("the fusion rules keep ", m->name(), " out (", traits.why_not_rule,
                            "): ", traits.why_not);
      }
      if (!m->control_predecessors().empty() || !m->control_successors().empty()) {
        return absl::StrCat(m->name(), " has control dependencies");
      }
      if (m == root || IsCheap(*m)) continue;
      for (const HloInstruction* user : m->users()) {
        if (!set.contains(user)) {
          return absl::StrCat("intermediate ", m->name(), " is also used by ", user->name());
        }
      }
      if (m == m->parent()->root()) {
        return absl::StrCat("intermediate ", m->name(), " is the computation's result");
      }
    }
    return std::nullopt;
  }

  Refusal CheckConsumer(const std::vector<HloInstruction*>& members,
                        const HloInstruction* root) const {
    const Shape& out = root->shape();
    if (out.element_type() != call_->shape().element_type() ||
        out.dimensions() != call_->shape().dimensions()) {
      return absl::StrCat(root->name(), " changes the result's type or shape");
    }
    if (!(check_.require_row_major_layouts ? IsRowMajor(out) : IsDenseStrided(out))) {
      return absl::StrCat(root->name(), " has layout {", out.layout().ToString(),
                          "}, which the library cannot write");
    }
    return CheckRulesAndEdges(members, root);
  }

  HloInstruction* call_;
  const LibraryCall& library_;
  const FusionRules& rules_;
  const LibraryCheckOptions& check_;
};

// `members` ordered so that operands come first.
std::vector<HloInstruction*> OperandsFirst(const std::vector<HloInstruction*>& members) {
  absl::flat_hash_set<HloInstruction*> set(members.begin(), members.end());
  absl::flat_hash_set<HloInstruction*> done;
  std::vector<HloInstruction*> order;
  std::vector<std::pair<HloInstruction*, bool>> stack;
  for (HloInstruction* m : members) stack.emplace_back(m, false);
  while (!stack.empty()) {
    auto [i, expanded] = stack.back();
    stack.pop_back();
    if (done.contains(i)) continue;
    if (expanded) {
      done.insert(i);
      order.push_back(i);
      continue;
    }
    stack.emplace_back(i, true);
    for (HloInstruction* operand : i->operands()) {
      if (set.contains(operand) && !done.contains(operand)) stack.emplace_back(operand, false);
    }
  }
  return order;
}

// Copies `members` into `body`, reading outside values through `map`.
absl::Status CloneInto(HloComputation* body, const std::vector<HloInstruction*>& members,
                       absl::flat_hash_map<const HloInstruction*, HloInstruction*>& map) {
  for (HloInstruction* m : OperandsFirst(members)) {
    std::vector<HloInstruction*> operands;
    for (HloInstruction* operand : m->operands()) {
      auto it = map.find(operand);
      if (it == map.end()) {
        return absl::InternalError(absl::StrCat("epilogue member ", m->name(),
                                                " reads ", operand->name(),
                                                ", which the call's body does not have"));
      }
      operands.push_back(it->second);
    }
    map[m] = body->AddInstruction(m->CloneWithNewOperands(m->shape(), operands));
  }
  return absl::OkStatus();
}

absl::Status Apply(HloInstruction* call, LibraryCall& library, const Absorption& a) {
  HloComputation* computation = call->parent();
  HloComputation* body = library.body;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  if (a.operand_index >= 0) {
    // Producer side: the body scales its parameter itself.
    HloInstruction* parameter = body->parameter(a.operand_index);
    HloInstruction* scaled = call->operand(a.operand_index);
    map[a.scaled_input] = parameter;
    std::vector<HloInstruction*> members = a.members;
    HLOC_RETURN_IF_ERROR(CloneInto(body, members, map));
    parameter->set_shape(a.scaled_input->shape());
    library.op->ReplaceOperandWith(a.operand_index, map.at(scaled));
    call->ReplaceOperandWith(a.operand_index, a.scaled_input);
    return computation->RemoveInstructionAndUnusedOperands(scaled);
  }
  map[call] = body->root();
  if (a.vector != nullptr) {
    int64_t number = body->num_parameters();
    map[a.vector] = body->AddInstruction(HloInstruction::CreateParameter(
        number, a.vector->shape(), absl::StrCat("param_", number)));
    call->AppendOperand(a.vector);
  }
  HLOC_RETURN_IF_ERROR(CloneInto(body, a.members, map));
  body->set_root(map.at(a.root));
  call->set_shape(a.root->shape());
  HLOC_RETURN_IF_ERROR(a.root->ReplaceAllUsesWith(call));
  return computation->RemoveInstructionAndUnusedOperands(a.root);
}

}  // namespace

LibraryEpilogueFusion::LibraryEpilogueFusion(FusionRules rules, LibraryCheckOptions check,
                                             FusionLedger* ledger)
    : rules_(std::move(rules)), check_(check), ledger_(ledger) {}

void LibraryEpilogueFusion::Record(const HloInstruction& call, bool accepted,
                                   absl::string_view rule, std::vector<std::string> subjects,
                                   std::string reason, std::string result) {
  if (ledger_ == nullptr || (!accepted && !ledger_->records_edges())) return;
  LedgerEntry entry;
  entry.pass = std::string(kPassName);
  entry.computation = call.parent()->name();
  entry.event = accepted ? "absorbed" : "refused";
  entry.subjects = std::move(subjects);
  entry.accepted = accepted;
  entry.rule = std::string(rule);
  entry.reason = std::move(reason);
  entry.result = std::move(result);
  ledger_->Add(std::move(entry));
}

absl::StatusOr<bool> LibraryEpilogueFusion::Run(HloModule& module) {
  stats_ = LibraryEpilogueStats();
  if (!rules_.fuse_library_epilogues()) return false;
  // Calls only change in place, so this list stays valid.
  std::vector<HloInstruction*> calls;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation()) continue;
    bool library_body = false;
    for (const HloInstruction* caller : module.CallersOf(computation)) {
      library_body |= LibraryCallName(*caller) != nullptr;
    }
    if (library_body) continue;
    for (HloInstruction* i : computation->MakeInstructionPostOrder()) {
      const std::string* name = LibraryCallName(*i);
      if (name != nullptr && FindEpilogueFamily(*name) != nullptr) calls.push_back(i);
    }
  }
  bool changed = false;
  for (HloInstruction* call : calls) {
    HLOC_ASSIGN_OR_RETURN(bool grown, GrowCall(call));
    changed |= grown;
  }
  return changed;
}

absl::StatusOr<bool> LibraryEpilogueFusion::GrowCall(HloInstruction* call) {
  const LibraryEpilogueFamily* family = FindEpilogueFamily(*LibraryCallName(*call));
  bool grown = false;
  // Each absorption removes at least one instruction; the bound is a guard.
  for (int round = 0; round < 64; ++round) {
    LibraryCall library;
    if (Refusal r = ReadLibraryCall(call, family, &library); r.has_value()) {
      Record(*call, false, *LibraryCallName(*call), {call->name()}, *r);
      break;
    }
    Search search = AbsorptionFinder(call, library, rules_, check_).Find();
    if (!search.found.has_value()) {
      if (!search.refusal.empty()) {
        Record(*call, false, *LibraryCallName(*call), search.subjects, search.refusal);
      }
      break;
    }
    Absorption& a = *search.found;
    std::vector<std::string> subjects = search.subjects;
    HLOC_RETURN_IF_ERROR(Apply(call, library, a));
    // The new identity, in the outliner's schema.
    if (a.step.has_value()) library.steps.push_back(*a.step);
    library.alpha *= a.alpha_factor;
    std::string name = EpilogueCompositeName(*family, library.steps);
    library.attributes.String("epilogue", EpilogueToString(library.steps))
        .Float("alpha", library.alpha);
    RecordLayout(library.attributes, "result_layout", call);
    std::string attributes = library.attributes.ToString();
    bool renamed = name != *LibraryCallName(*call);
    call->SetFrontendAttribute(kCompositeName, name);
    call->SetFrontendAttribute(kCompositeAttributes, attributes);
    HloModule* module = call->parent()->parent();
    if (renamed) call->to_apply()->set_name(module->UniquifyComputationName(name));
    absl::string_view short_name = name;
    if (absl::StartsWith(short_name, "hloc.")) short_name.remove_prefix(5);
    if (!absl::StartsWith(call->name(), short_name)) {
      call->set_name(module->UniquifyName(short_name));
    }
    Record(*call, true, name, std::move(subjects),
           absl::StrCat(a.what, "; numerics: ", a.numerics, "; ", attributes), call->name());
    ++stats_.absorbed[a.what];
    if (!grown) ++stats_.calls_grown;
    grown = true;
  }
  return grown;
}

}  // namespace hloc
