import sys, data, counter, numpy as np
kw = eval(sys.argv[1]) if len(sys.argv) > 1 else {}
seqs = data.load_countix()
preds = np.array([counter.count_sequence(s.poses, s.label, config=counter.Config(**kw)).session for s in seqs]); gts = np.array([s.count for s in seqs])
rel = (preds - gts) / gts
ours = np.array([bool(s.action) for s in seqs])
print(kw, "all MAE %.3f OBO %.3f" % data.mae_obo(preds, gts), "ours MAE %.3f OBO %.3f" % data.mae_obo(preds[ours], gts[ours]),
      "over %d under %d signed %.3f" % ((preds > gts).sum(), (preds < gts).sum(), rel.mean()), flush=True)
