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
// It reads AUTOTUNE_CC_INSTRUMENT (the build kind: full when unset; autotune cc has checked it)
// and AUTOTUNE_CC_SELECTS from the compiler's environment, as autotune cc does.
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
// outcomes of such comparisons (its "special instructions": the demo's 30 are its 19 selects and
// 11 such comparisons). Each gets a branch diamond on its outcome right after it, whose two empty
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

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "autotune-selects", "2", [](PassBuilder &PB) {
#if LLVM_VERSION_MAJOR >= 16
            if (int kind = sancovKind()) {
              PB.registerOptimizerEarlyEPCallback(
#if LLVM_VERSION_MAJOR >= 20
                  [kind](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) { addEarly(MPM, kind); });
#else
                  [kind](ModulePassManager &MPM, OptimizationLevel) { addEarly(MPM, kind); });
#endif
              return;
            }
            // the inline kinds (edge, ngram, asked with AUTOTUNE_CC_SELECTS=1): split where their
            // pass (autotune_edges.cpp, loaded after this plugin) then counts, at OptimizerEarly
            PB.registerOptimizerEarlyEPCallback(
#if LLVM_VERSION_MAJOR >= 20
                [](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) { MPM.addPass(SplitSelects()); });
#else
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(SplitSelects()); });
#endif
            return;
#endif
            PB.registerOptimizerLastEPCallback(
#if LLVM_VERSION_MAJOR >= 20
                [](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) { MPM.addPass(SplitSelects()); });
#else
                [](ModulePassManager &MPM, OptimizationLevel) { MPM.addPass(SplitSelects()); });
#endif
          }};
}
