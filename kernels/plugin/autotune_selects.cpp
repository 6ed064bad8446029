// autotune_selects.cpp - an LLVM pass plugin of autotune cc (clang 14 to 21, new pass manager).
//
// AFL++'s PCGUARD pass counts each side of a scalar `select` with a guard of its own, so a
// comparison the optimiser turned into a conditional move (min/max, clamps, branchless code) is
// still feedback. clang's SanitizerCoverage counts basic blocks and edges only. Two ways here:
// with LLVM 16 or newer, where this plugin runs SanitizerCoverage itself (below), CountSpecials
// counts each select and each comparison kept as a value as AFL++ 5.02c's PCGUARD does, with two
// counters chosen by a select of their addresses and no change to the CFG. Up to LLVM 15 (and for
// the inline kinds when asked), SplitSelects turns every select whose condition is one i1 into a
// branch diamond (`br c, T, F` and a phi), so the SanitizerCoverage that runs after it instruments
// each side as a block of its own. Either way each select gives the fuzzer the two outcomes
// PCGUARD's guards give. Selects on vector conditions stay as they are.
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
// 8-bit counters), this plugin runs SanitizerCoverage itself at OptimizerEarly, then counts the
// selects there (unless AUTOTUNE_CC_SELECTS=0), and autotune cc gives clang an allowlist that
// matches nothing, so clang's own pass at OptimizerLast instruments nothing (it still marks
// no_sanitize("coverage") functions, which the early pass skips). Up to LLVM 15 it splits the
// selects at OptimizerLast and clang's pass instruments them, as AFL++ 4.04c's did. For the inline
// kinds (edge, ngram: their own pass, autotune_edges.cpp, which runs where AFL++'s CLASSIC/NGRAM
// runs) it only splits selects, when asked, at that pass's extension point.
//
// Where it runs, and whether it runs SanitizerCoverage, is autotune cc's decision
// (autotune.cc.plugin_stage), which it passes in the compiler's environment as
// AUTOTUNE_CC_PLUGIN_STAGE: `sancov-early` (SanitizerCoverage of the build kind, then the selects
// counted, at OptimizerEarly; autotune cc gives clang the allowlist that matches nothing exactly then),
// `early` (split selects at OptimizerEarly: the inline kinds from LLVM 16), or `last` (split
// selects at OptimizerLast, before clang's SanitizerCoverage: up to LLVM 15, and a compile that
// gives its own SanitizerCoverage allow/blocklist, which only clang's pass reads). Unset: `last`.
// It also reads AUTOTUNE_CC_INSTRUMENT (the build kind, for SanitizerCoverage's options: full when
// unset; autotune cc has checked it) and AUTOTUNE_CC_SELECTS.
//
// Loaded by `autotune cc` with -fpass-plugin (autotune.cc.plugin_needed), built by
// autotune.runtime.artifacts.select_plugin(). AUTOTUNE_SELECTS_DEBUG=1 prints the counts per
// module on stderr.
#include "llvm/Config/llvm-config.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
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
// Special instructions, counted as AFL++ 5.02c's PCGUARD counts them, without changing the CFG.
//
// What 5.02c's PCGUARD does (read from its output, `clang-21 -fpass-plugin=SanitizerCoveragePCGUARD.so
// -O2 -S -emit-llvm` on small programs, not from its source, which Debian's archive no longer
// carries): each `select` on one i1 condition and each zext/sext of an i1 (a comparison whose
// outcome the program keeps as a value: `return a < b;`, `c ? -1 : 0` once InstCombine has made it
// `sext (icmp ..)`; when the i1 is an and/or of i1s, each of those instead) gets two guards, one
// per outcome, chosen by a select of the two guards' addresses on that i1 and counted right after
// it; a block that holds one and had a guard of its own loses that guard ("N instrumentations
// saved"): the first outcome pair reuses it (here only when no call comes before the special in its
// block: CountSpecials). On the demo under clang 21, PCGUARD 5.02c: 216 blocks, 34 special
// instructions, 4 guards saved, 280 points; ours: 216, 35, 3, 283. The CFG is
// not touched, so SanitizerCoverage's pruning of dominated blocks sees the program PCGUARD's sees.
// (An earlier version of this plugin split each into a branch diamond before SanitizerCoverage:
// the same outcomes told apart, but +9.5 % points on libxml2, 53,461 counters against PCGUARD's
// 48,804 guards, and a slower build: benchmarks/results/guard-points-2026-12-03-libxml2.md.)
//
// This pass runs right after SanitizerCoverage at OptimizerEarly and works on what it emitted: the
// function's counter (guard) array, found by its increments, and each block's increment
// (inline 8-bit counters: `load i8`, `add 1`, `store i8`, all !nosanitize; trace-pc-guard: the call
// of __sanitizer_cov_trace_pc_guard). The extra counters go into one more array per function in the
// same section, so the runtime's map (the section's start to stop) holds them and the census
// (full, blocks) counts the same points as the guard kind.
struct Special {
  Instruction *After;  // the increment goes right after it (after the PHIs, for a PHI)
  Value *Cond;         // the i1 whose outcome picks the counter
};

// `select i1 a, i1 b, i1 false` (a && b) or `select i1 a, i1 true, i1 b` (a || b): an and/or whose
// second operand is not evaluated (poison) when the first decides.
bool isLogical(const SelectInst &S) {
  return S.getType()->isIntegerTy(1) && (isa<Constant>(S.getTrueValue()) || isa<Constant>(S.getFalseValue()));
}

// The i1 values an and/or of i1s (or their select forms, `select a, b, false`) combines: what
// PCGUARD counts for a zext/sext of such a combination (5.02c on the demo's `return !first && c >=
// '0' && c <= '9';`: the two comparisons, not the `and`).
void leavesOf(Value *V, SmallVectorImpl<Value *> &Out, SmallPtrSetImpl<Value *> &Seen) {
  if (isa<Constant>(V) || !Seen.insert(V).second) return;
  if (auto *B = dyn_cast<BinaryOperator>(V);
      B && (B->getOpcode() == Instruction::And || B->getOpcode() == Instruction::Or)) {
    leavesOf(B->getOperand(0), Out, Seen);
    leavesOf(B->getOperand(1), Out, Seen);
    return;
  }
  if (auto *S = dyn_cast<SelectInst>(V); S && isLogical(*S)) {
    leavesOf(S->getCondition(), Out, Seen);
    leavesOf(S->getTrueValue(), Out, Seen);
    leavesOf(S->getFalseValue(), Out, Seen);
    return;
  }
  Out.push_back(V);
}

// The function's special instructions, each as where its increment goes and the i1 it counts: a
// select on one i1 (its condition, after it); a zext/sext of an i1 (that i1, or each value an and/or
// combines into it) and a select that is a logical and/or (its two operands), each right after its
// own definition: the program's own i1s, each counted once. (5.02c's PCGUARD on the demo: a `&&`
// still a select where it runs counts both comparisons even when a branch uses it; an `or` of two
// comparisons that a branch uses, nothing.)
void specialsOf(Function &F, SmallVectorImpl<Special> &Out) {
  SmallPtrSet<Value *, 32> Seen;
  for (BasicBlock &BB : F)
    for (Instruction &I : BB) {
      if (I.getMetadata("nosanitize")) continue;
      Value *Combined = nullptr;  // an i1 whose leaves are counted
      if (auto *S = dyn_cast<SelectInst>(&I)) {
        Value *C = S->getCondition();
        if (!C->getType()->isIntegerTy(1) || isa<Constant>(C)) continue;
        if (!isLogical(*S)) {
          Out.push_back({&I, C});
          continue;
        }
        Combined = S;  // `a && b` or `a || b` as a select: a and b, whatever uses it
      } else if ((isa<ZExtInst>(I) || isa<SExtInst>(I)) && I.getOperand(0)->getType()->isIntegerTy(1)) {
        Combined = I.getOperand(0);
      } else {
        continue;
      }
      SmallVector<Value *, 4> leaves;
      leavesOf(Combined, leaves, Seen);
      for (Value *L : leaves) {
        auto *LI = dyn_cast<Instruction>(L);
        // an argument, or an invoke's result (defined only on its normal edge): counted where used
        Out.push_back({LI && !LI->isTerminator() ? LI : &I, L});
      }
    }
}

// The global array a pointer points into, or null: through constant GEPs and casts, and through
// `inttoptr (add (ptrtoint @array), offset)`, the form trace-pc-guard's guard addresses take up to
// LLVM 20 or so (clang 16: every guard but a function's first).
GlobalVariable *arrayOf(Value *Ptr, const DataLayout &DL) {
  APInt Off(DL.getIndexTypeSizeInBits(Ptr->getType()), 0);
  Value *V = Ptr->stripAndAccumulateConstantOffsets(DL, Off, true);
  for (int depth = 0; depth < 4; ++depth) {
    auto *CE = dyn_cast<ConstantExpr>(V);
    if (!CE || (CE->getOpcode() != Instruction::IntToPtr && CE->getOpcode() != Instruction::PtrToInt &&
                CE->getOpcode() != Instruction::Add))
      break;
    V = CE->getOperand(0);
  }
  return dyn_cast<GlobalVariable>(V);
}

// The block's own increment of its counter (guard) in Arr, as SanitizerCoverage emitted it (and, for
// the guard kind, as autotune_counters.cpp made it NeverZero): the instructions to erase (the store
// or call first) and the counter's address; false when the block has none.
bool blockIncrement(BasicBlock &BB, GlobalVariable *Arr, int kind, const DataLayout &DL,
                    SmallVectorImpl<Instruction *> &Erase, Value *&Ptr) {
  for (Instruction &I : BB) {
    if (kind == 'c') {
      auto *St = dyn_cast<StoreInst>(&I);
      if (!St || !St->getMetadata("nosanitize") || arrayOf(St->getPointerOperand(), DL) != Arr) continue;
      // the increment's instructions: from the stored value back to the load of the same counter
      SmallVector<Instruction *, 8> work, found;
      SmallPtrSet<Instruction *, 8> in;
      in.insert(St);
      if (auto *V = dyn_cast<Instruction>(St->getValueOperand())) work.push_back(V);
      bool loaded = false;
      while (!work.empty()) {
        Instruction *X = work.pop_back_val();
        if (!in.insert(X).second) continue;
        if (X->getParent() != &BB || X->mayHaveSideEffects()) return false;
        found.push_back(X);
        if (auto *Ld = dyn_cast<LoadInst>(X)) {
          if (Ld->getPointerOperand() != St->getPointerOperand()) return false;
          loaded = true;
          continue;
        }
        for (Value *Op : X->operands())
          if (auto *OI = dyn_cast<Instruction>(Op)) work.push_back(OI);
      }
      if (!loaded) return false;
      for (Instruction *X : found)
        for (User *U : X->users())
          if (!in.count(cast<Instruction>(U))) return false;  // used outside the increment
      Erase.assign({St});
      Erase.append(found.begin(), found.end());
      Ptr = St->getPointerOperand();
      return true;
    }
    auto *Call = dyn_cast<CallInst>(&I);
    Function *Callee = Call ? Call->getCalledFunction() : nullptr;
    if (!Callee || Callee->getName() != "__sanitizer_cov_trace_pc_guard" || arrayOf(Call->getArgOperand(0), DL) != Arr)
      continue;
    Erase.assign({Call});
    Ptr = Call->getArgOperand(0);
    return true;
  }
  return false;
}

// Whether a call (not an intrinsic, not SanitizerCoverage's own guard call) runs in BB before After.
bool callBefore(BasicBlock &BB, Instruction *After) {
  for (Instruction &I : BB) {
    if (&I == After) return false;
    auto *C = dyn_cast<CallBase>(&I);
    if (!C || isa<IntrinsicInst>(C)) continue;
    Function *Callee = C->getCalledFunction();
    if (Callee && Callee->getName() == "__sanitizer_cov_trace_pc_guard") continue;
    return true;
  }
  return false;
}

// The function's counter (guard) array, found by the first increment SanitizerCoverage put in it.
GlobalVariable *counterArray(Function &F, const char *section, int kind, const DataLayout &DL) {
  for (BasicBlock &BB : F)
    for (Instruction &I : BB) {
      Value *P = nullptr;
      if (auto *St = dyn_cast<StoreInst>(&I); St && kind == 'c' && St->getMetadata("nosanitize")) P = St->getPointerOperand();
      if (auto *C = dyn_cast<CallInst>(&I); C && kind == 'g' && C->getCalledFunction() &&
                                             C->getCalledFunction()->getName() == "__sanitizer_cov_trace_pc_guard")
        P = C->getArgOperand(0);
      GlobalVariable *G = P ? arrayOf(P, DL) : nullptr;
      if (G && G->hasSection() && G->getSection() == section) return G;
    }
  return nullptr;
}

struct CountSpecials : PassInfoMixin<CountSpecials> {
  int kind;  // 'c' inline 8-bit counters, 'g' trace-pc-guard
  explicit CountSpecials(int k) : kind(k) {}

  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    const DataLayout &DL = M.getDataLayout();
    const char *section = kind == 'c' ? "__sancov_cntrs" : "__sancov_guards";
    SmallVector<std::pair<Function *, GlobalVariable *>, 64> arrays;
    for (Function &F : M)
      if (!F.isDeclaration())
        if (GlobalVariable *G = counterArray(F, section, kind, DL)) arrays.push_back({&F, G});
    unsigned counted = 0, reused = 0;
    SmallVector<GlobalVariable *, 64> made;
    for (auto &[F, Arr] : arrays) {
      SmallVector<Special, 16> specials;
      specialsOf(*F, specials);
      if (specials.empty()) continue;
      Type *Elem = kind == 'c' ? Type::getInt8Ty(M.getContext()) : Type::getInt32Ty(M.getContext());
      // Which specials take over their block's own counter: the first of its block, when no call
      // comes between the block's start (where SanitizerCoverage counts it) and the special. Moving
      // the count past a call would change the order in which counters are hit, which the full and
      // blocks kinds' metrics (edges, N-grams, contexts: keys of consecutive guards) read. Two new
      // counters for every other special.
      SmallVector<char, 16> reuse(specials.size(), 0);
      SmallVector<SmallVector<Instruction *, 8>, 16> erases(specials.size());
      SmallVector<Value *, 16> owns(specials.size(), nullptr);
      SmallPtrSet<BasicBlock *, 16> seen;
      unsigned extra = 0;
      for (size_t i = 0; i < specials.size(); ++i) {
        BasicBlock *BB = specials[i].After->getParent();
        reuse[i] = seen.insert(BB).second && !callBefore(*BB, specials[i].After) &&
                   blockIncrement(*BB, Arr, kind, DL, erases[i], owns[i]);
        extra += reuse[i] ? 1 : 2;
      }
      auto *Ty = ArrayType::get(Elem, extra);
      auto *Extra = new GlobalVariable(M, Ty, false, GlobalValue::PrivateLinkage, Constant::getNullValue(Ty),
                                       "__autotune_special_");
      Extra->setSection(section);
      Extra->setAlignment(Arr->getAlign());
      Extra->setComdat(Arr->getComdat());
      if (MDNode *A = Arr->getMetadata(LLVMContext::MD_associated)) Extra->setMetadata(LLVMContext::MD_associated, A);
      made.push_back(Extra);
      unsigned next = 0;
      auto fresh = [&]() -> Value * {
        return ConstantExpr::getInBoundsGetElementPtr(
            Ty, Extra, ArrayRef<Constant *>{ConstantInt::get(Type::getInt64Ty(M.getContext()), 0),
                                            ConstantInt::get(Type::getInt64Ty(M.getContext()), next++)});
      };
      for (size_t i = 0; i < specials.size(); ++i) {
        Special &S = specials[i];
        BasicBlock *BB = S.After->getParent();
        Value *first = nullptr;
        if (reuse[i]) {
          first = owns[i];
          for (Instruction *I : erases[i]) I->dropAllReferences();  // any order of erasing is safe then
          for (Instruction *I : erases[i]) I->eraseFromParent();
          ++reused;
        } else {
          first = fresh();
        }
        Value *second = fresh();
        IRBuilder<> IRB(isa<PHINode>(S.After) ? &*BB->getFirstInsertionPt() : S.After->getNextNode());
        Value *Ptr = IRB.CreateSelect(S.Cond, first, second);
        if (auto *Sel = dyn_cast<Instruction>(Ptr)) Sel->setMetadata("nosanitize", MDNode::get(M.getContext(), {}));
        if (kind == 'c') {
          // NeverZero, as autotune_counters.cpp makes SanitizerCoverage's increments: 255 + 1 = 1
          LoadInst *Ld = IRB.CreateLoad(Elem, Ptr);
          Value *Inc = IRB.CreateAdd(Ld, ConstantInt::get(Elem, 1));
          Value *Zero = IRB.CreateICmpEQ(Inc, ConstantInt::get(Elem, 0));
          Value *Carry = IRB.CreateZExt(Zero, Elem);
          Value *Sum = IRB.CreateAdd(Inc, Carry);
          StoreInst *St = IRB.CreateStore(Sum, Ptr);
          for (Value *V : {static_cast<Value *>(Ld), Inc, Zero, Carry, Sum, static_cast<Value *>(St)})
            if (auto *X = dyn_cast<Instruction>(V)) X->setMetadata("nosanitize", MDNode::get(M.getContext(), {}));
        } else {
          FunctionCallee Guard = M.getOrInsertFunction("__sanitizer_cov_trace_pc_guard", IRB.getVoidTy(), Ptr->getType());
          IRB.CreateCall(Guard, {Ptr});
        }
        ++counted;
      }
    }
    SmallVector<GlobalValue *, 64> withComdat, without;
    for (GlobalVariable *G : made) (G->hasComdat() ? withComdat : without).push_back(G);
    appendToCompilerUsed(M, withComdat);  // as SanitizerCoverage keeps its own arrays
    appendToUsed(M, without);
    const char *dbg = std::getenv("AUTOTUNE_SELECTS_DEBUG");
    if (dbg && *dbg == '1')
      errs() << "[autotune] " << M.getName() << ": " << counted << " special instructions counted, " << reused
             << " block counters reused\n";
    return counted ? PreservedAnalyses::none() : PreservedAnalyses::all();
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
  MPM.addPass(SanitizerCoveragePass(sancovOptions(kind)));  // ModuleSanitizerCoveragePass up to LLVM 15
  if (!(sel && !std::strcmp(sel, "0"))) MPM.addPass(CountSpecials(kind));
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
  return {LLVM_PLUGIN_API_VERSION, "autotune-selects", "4", [](PassBuilder &PB) {
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
