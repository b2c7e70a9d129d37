"""Plots the counter's signal for cached MoveNet keypoints of dev videos (diagnostics)."""
import sys, counter, numpy as np
import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt
kw = eval(sys.argv[1]); names = sys.argv[2:]
fig, axs = plt.subplots(len(names), 1, figsize=(16, 2.6 * len(names)))
for ax, n in zip(np.atleast_1d(axs), names):
    poses = np.load(f'/tmp/posewatch-movenet/{n}.npy')
    c = counter.count_sequence(poses, action='squats', config=counter.Config(**kw))
    tr = np.array(c.trace)
    if len(tr):
        ax.plot(tr[:, 0], tr[:, 1], lw=1); ax.plot(tr[:, 0], tr[:, 2], 'k:', lw=.7); ax.plot(tr[:, 0], tr[:, 3], 'k:', lw=.7)
    vis = ((poses[:, [0,5,6,7,8,9,10,11,12,13,14,15,16], 2] >= 0.3).sum(axis=1))
    ax.plot(np.arange(len(poses)) / 15, vis / 13 - 1.2, 'g', lw=.7)
    for e in c.events: ax.axvline(e[0], color='r', alpha=.4)
    ax.set_title(f'{n} pred {c.session}')
plt.tight_layout(); plt.savefig('/tmp/diagv.png', dpi=55)
