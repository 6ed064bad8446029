// autotune_selects.cpp - an LLVM pass plugin of autotune cc (clang 14 to 21, new pass manager).
//
// AFL++'s PCGUARD pass counts each side of a scalar `select` with a guard of its own, so a
// comparison the optimiser turned into a conditional move (min/max, clamps, branchless code) is
// still feedback. clang's SanitizerCoverage counts basic blocks and edges only. This pass turns
// every select whose condition is one i1 into a branch diamond (`br c, T, F` and a phi), so the
// SanitizerCoverage that runs after it instruments each side as a block of its own: each select
// gives the fuzzer the same two outcomes PCGUARD's guards give. Selects on vector conditions stay
// as they are (PCGUARD handles them apart, too).
//
// Where in LLVM's pipeline. Up to LLVM 15 AFL++'s PCGUARD pass ran at the OptimizerLast extension
// point, where clang runs SanitizerCoverage; from LLVM 16 on it runs at OptimizerEarly, before the
// module optimisation pipeline (loop rotation and unrolling, vectorisation, the last InstCombine
// and SimplifyCFG; `clang -mllvm -print-pipeline-passes` with AFL++ 5.02c's plugin shows it right
// after rpo-function-attrs). The late pipeline rewrites code PCGUARD has already counted: a
// select becomes a `sext i1` or a min/max, a loop header is duplicated. A SanitizerCoverage at
// OptimizerLast then counts other points than PCGUARD (demo under clang 21: 238 counters against
// PCGUARD's 259 guards, and `x ? -1 : 0` no point at all). So with LLVM 16 or newer, for the
// build kinds that count SanitizerCoverage's points (full, blocks: trace-pc-guard; guard: inline
// 8-bit counters), this plugin runs SanitizerCoverage itself at OptimizerEarly, after splitting
// the selects there (unless AUTOTUNE_CC_SELECTS=0), and autotune cc gives clang an allowlist that
// matches nothing, so clang's own pass at OptimizerLast instruments nothing (it still marks
// no_sanitize("coverage") functions, which the early pass skips). Up to LLVM 15 it splits the
// selects at OptimizerLast and clang's pass instruments them, as AFL++ 4.04c's did. For the inline
// kinds (edge, ngram: their own pass, autotune_edges.cpp, which runs where AFL++'s CLASSIC/NGRAM
// runs) it only splits selects, when asked, at that pass's extension point.
//
// Where it runs, and whether it runs SanitizerCoverage, is autotune cc's decision
// (autotune.cc.plugin_stage), which it passes in the compiler's environment as
// AUTOTUNE_CC_PLUGIN_STAGE: `sancov-early` (split, then SanitizerCoverage of the build kind, at
// OptimizerEarly; autotune cc gives clang the allowlist that matches nothing exactly then),
// `early` (split selects at OptimizerEarly: the inline kinds from LLVM 16), or `last` (split
// selects at OptimizerLast, before clang's SanitizerCoverage: up to LLVM 15, and a compile that
// gives its own SanitizerCoverage allow/blocklist, which only clang's pass reads). Unset: `last`.
// It also reads AUTOTUNE_CC_INSTRUMENT (the build kind, for SanitizerCoverage's options: full when
// unset; autotune cc has checked it) and AUTOTUNE_CC_SELECTS.
//
// Loaded by `autotune cc` with -fpass-plugin (autotune.cc.plugin_needed), built by
// autotune.runtime.artifacts.select_plugin(). AUTOTUNE_SELECTS_DEBUG=1 prints the count per
// module on stderr.
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#if LLVM_VERSION_MAJOR >= 16
#include "llvm/Transforms/Instrumentation/SanitizerCoverage.h"
#endif

#include <cstdlib>
#include <cstring>

using namespace llvm;

namespace {

struct SplitSelects : PassInfoMixin<SplitSelects> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    unsigned split = 0;
    for (Function &F : M) {
      if (F.isDeclaration() || F.hasOptNone()) continue;
      SmallVector<SelectInst *, 32> work;
      for (BasicBlock &BB : F)
        for (Instruction &I : BB)
          if (auto *S = dyn_cast<SelectInst>(&I))
            if (S->getCondition()->getType()->isIntegerTy(1) && S->getTrueValue() != S->getFalseValue())
              work.push_back(S);
      for (SelectInst *S : work) {
        Instruction *ThenTerm = nullptr, *ElseTerm = nullptr;
        SplitBlockAndInsertIfThenElse(S->getCondition(), S, &ThenTerm, &ElseTerm);
        BasicBlock *Tail = S->getParent();
#if LLVM_VERSION_MAJOR >= 18  // insertion by iterator
        PHINode *P = PHINode::Create(S->getType(), 2, S->getName(), Tail->begin());
#else
        PHINode *P = PHINode::Create(S->getType(), 2, S->getName(), &Tail->front());
#endif
        P->addIncoming(S->getTrueValue(), ThenTerm->getParent());
        P->addIncoming(S->getFalseValue(), ElseTerm->getParent());
        P->setDebugLoc(S->getDebugLoc());
        S->replaceAllUsesWith(P);
        S->eraseFromParent();
        ++split;
      }
    }
    const char *dbg = std::getenv("AUTOTUNE_SELECTS_DEBUG");
    if (dbg && *dbg == '1') errs() << "[autotune] " << M.getName() << ": " << split << " selects split\n";
    return split ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

#if LLVM_VERSION_MAJOR >= 16
// A comparison whose outcome the program keeps as a value (`return x == y;`, `n += a < b`, `c ? -1 :
// 0` once InstCombine has made it `sext (icmp ..)`, a flag stored or or-ed with another) has no
// branch of its own, so blocks cannot tell its outcomes apart; AFL++ 5.02c's PCGUARD counts both
// outcomes of such comparisons. (Inferred from its output, not read in its source: on the demo it
// reports 30 "special instructions", and the demo's optimised IR at its stage holds 19 selects and
// 11 such comparisons; tests/test_guard.py checks that our build tells a kept comparison apart
// exactly when AFL++'s does.) Each gets a branch diamond on its outcome right after it, whose two empty
// sides SanitizerCoverage then counts. A comparison used only as branch or select conditions is
// left alone: its branch is already counted, its select is split.
bool keptAsValue(const Instruction &C) {
  if (!isa<ICmpInst>(C) && !isa<FCmpInst>(C)) return false;
  if (!C.getType()->isIntegerTy(1) || C.use_empty()) return false;
  for (const User *U : C.users()) {
    if (isa<BranchInst>(U)) continue;
    if (auto *S = dyn_cast<SelectInst>(U))
      if (S->getCondition() == &C) continue;
    return true;
  }
  return false;
}

struct SplitComparisons : PassInfoMixin<SplitComparisons> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    unsigned split = 0;
    for (Function &F : M) {
      if (F.isDeclaration() || F.hasOptNone() || F.hasFnAttribute(Attribute::NoSanitizeCoverage)) continue;
      SmallVector<Instruction *, 32> work;
      for (BasicBlock &BB : F)
        for (Instruction &I : BB)
          if (keptAsValue(I)) work.push_back(&I);
      for (Instruction *C : work) {
        Instruction *ThenTerm = nullptr, *ElseTerm = nullptr;
        SplitBlockAndInsertIfThenElse(C, C->getNextNode(), &ThenTerm, &ElseTerm);
        ++split;
      }
    }
    const char *dbg = std::getenv("AUTOTUNE_SELECTS_DEBUG");
    if (dbg && *dbg == '1') errs() << "[autotune] " << M.getName() << ": " << split << " comparisons split\n";
    return split ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

// What SanitizerCoverage counts for the build kind in AUTOTUNE_CC_INSTRUMENT, or 0 when the kind
// does not count SanitizerCoverage's points (edge, ngram: their own pass, autotune_edges.cpp).
int sancovKind() {
  const char *k = std::getenv("AUTOTUNE_CC_INSTRUMENT");
  if (!k || !*k || !std::strcmp(k, "full") || !std::strcmp(k, "blocks")) return 'g';  // trace-pc-guard
  if (!std::strcmp(k, "guard")) return 'c';                                           // inline 8-bit counters
  return 0;
}

SanitizerCoverageOptions sancovOptions(int kind) {
  SanitizerCoverageOptions o;  // what clang's -fsanitize-coverage=trace-pc-guard / inline-8bit-counters sets
  o.CoverageType = SanitizerCoverageOptions::SCK_Edge;
  o.TracePCGuard = kind == 'g';
  o.Inline8bitCounters = kind == 'c';
  return o;
}

void addEarly(ModulePassManager &MPM, int kind) {
  const char *sel = std::getenv("AUTOTUNE_CC_SELECTS");
  if (!(sel && !std::strcmp(sel, "0"))) {
    MPM.addPass(SplitSelects());
    MPM.addPass(SplitComparisons());
  }
  MPM.addPass(SanitizerCoveragePass(sancovOptions(kind)));  // ModuleSanitizerCoveragePass up to LLVM 15
}
#endif

// Runs add(MPM) at the OptimizerEarly (early) or OptimizerLast extension point; the callbacks gained
// an LTO phase argument in LLVM 20.
template <typename Add>
void at(PassBuilder &PB, bool early, Add add) {
#if LLVM_VERSION_MAJOR >= 20
  auto cb = [add](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) { add(MPM); };
#else
  auto cb = [add](ModulePassManager &MPM, OptimizationLevel) { add(MPM); };
#endif
#if LLVM_VERSION_MAJOR >= 16
  if (early) {
    PB.registerOptimizerEarlyEPCallback(cb);
    return;
  }
#else
  (void)early;
#endif
  PB.registerOptimizerLastEPCallback(cb);
}

#if LLVM_VERSION_MAJOR >= 16
bool stageIs(const char *name) {
  const char *stage = std::getenv("AUTOTUNE_CC_PLUGIN_STAGE");
  return stage && !std::strcmp(stage, name);
}
#endif

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "autotune-selects", "3", [](PassBuilder &PB) {
            auto splitSelects = [](ModulePassManager &MPM) { MPM.addPass(SplitSelects()); };
#if LLVM_VERSION_MAJOR >= 16
            int kind = sancovKind();
            if (kind && stageIs("sancov-early")) {
              at(PB, true, [kind](ModulePassManager &MPM) { addEarly(MPM, kind); });
              return;
            }
            if (stageIs("early")) {
              at(PB, true, splitSelects);
              return;
            }
#endif
            at(PB, false, splitSelects);
          }};
}
