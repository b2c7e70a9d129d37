"""Plots the counter's signal, thresholds and events for named Countix sequences (diagnostics)."""
import sys, data, counter, numpy as np
import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt
seqs = {s.name: s for s in data.load_countix()}
kw = eval(sys.argv[1]); names = sys.argv[2:]
fig, axs = plt.subplots(len(names), 1, figsize=(16, 2.6 * len(names)))
for ax, n in zip(np.atleast_1d(axs), names):
    s = seqs[n]; c = counter.count_sequence(s.poses, s.label, config=counter.Config(**kw))
    tr = np.array(c.trace)
    if len(tr):
        ax.plot(tr[:, 0], tr[:, 1], lw=1); ax.plot(tr[:, 0], tr[:, 2], 'k:', lw=.7); ax.plot(tr[:, 0], tr[:, 3], 'k:', lw=.7)
    miss = np.where(s.poses[:, 5, 2] == 0)[0] / 15
    ax.plot(miss, np.zeros(len(miss)), 'm.', ms=2)
    for e in c.events: ax.axvline(e[0], color='r', alpha=.4)
    ax.set_title(f'{n} gt {s.count} pred {c.session}')
plt.tight_layout(); plt.savefig('/tmp/diag.png', dpi=55)
