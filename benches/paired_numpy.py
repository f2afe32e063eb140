#!/usr/bin/env python3
"""A paired run in plain numpy beside basis-lab's, timed in one invocation.

The numpy side is the key lab's paired run written as the model is defined (docs/numerics.md
§1-§3): one episode at a time, its k delta-rule writes and k reads with numpy vectors and
matrices, the exact reverse pass through every write and the column normalisation, and the
four arms of the default preset (GD, Adam, sign descent, Muon with five Newton-Schulz steps),
each trained from W0 and from Q·W0 on the same episodes, with the per-step metrics of §3 (loss,
orientation and Gram divergence, axis concentration). It replays the W0, Q and episodes of
`basis-lab run PRESET`'s trace.json and checks that it ends at the trace's final weights, so
both sides ran the same run.

A second numpy version stacks the twins of every arm and the episodes of a step, so that each
write, the reads and each reversed write are one numpy operation over all of them: about what
numpy can do at its best here.

basis-lab's figure is the whole process `basis-lab run PRESET --no-trace --quiet`, which also
evaluates the held-out set, the rotation baselines and the activation statistics every
`eval_every` steps and writes its tables: more work than the numpy side does, so the ratio is
a lower bound. Each time is the fastest of a few runs.

Usage: python3 benches/paired_numpy.py [--binary target/release/basis-lab] [--preset default]
       [--steps 300]
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

NS = (3.4445, -4.7750, 2.0315)


def keys_of(w):
    norms = np.linalg.norm(w, axis=0)
    return w / norms, norms


def loss_and_grad(w, episodes, beta, gain, vb):
    """Mean query cross-entropy over the episodes and its exact gradient (numerics §1)."""
    k, norms = keys_of(w)
    d_keys = np.zeros_like(k)
    used = np.zeros(w.shape[1], dtype=bool)
    total, count = 0.0, 0
    for ep in episodes:
        pairs = list(zip(ep["keys"], ep["values"]))
        s = np.zeros((vb, k.shape[0]))
        history, deltas = [], []
        for a, b in pairs:
            delta = -(s @ k[:, a])
            delta[b] += 1.0
            history.append(s)
            deltas.append(delta)
            s = s + beta * np.outer(delta, k[:, a])
        d_s = np.zeros_like(s)
        for q in ep["query_order"]:
            a, b = pairs[q]
            used[a] = True
            z = gain * (s @ k[:, a])
            top = z.max()
            p = np.exp(z - top)
            total += top + np.log(p.sum()) - z[b]
            p /= p.sum()
            p[b] -= 1.0
            dr = gain * p
            d_s += np.outer(dr, k[:, a])
            d_keys[:, a] += s.T @ dr
            count += 1
        for (a, _), s_prev, delta in zip(reversed(pairs), reversed(history), reversed(deltas)):
            used[a] = True
            d_delta = beta * (d_s @ k[:, a])
            d_keys[:, a] += beta * (d_s.T @ delta) - s_prev.T @ d_delta
            d_s -= np.outer(d_delta, k[:, a])
    d_keys /= count
    grad = np.zeros_like(w)
    for a in np.flatnonzero(used):
        g, ka = d_keys[:, a], k[:, a]
        grad[:, a] = (g - ka * (ka @ g)) / norms[a]
    return total / count, grad


def loss_and_grad_stacked(ws, episodes, beta, gain, vb):
    """`loss_and_grad` of every twin at once: `ws` stacks the twins' weights (twins × d_k × V),
    and each write, the reads and each reversed write are one numpy operation over every twin
    and every episode of the step. Returns the losses and the gradients, stacked likewise."""
    norms = np.linalg.norm(ws, axis=1, keepdims=True)
    k = ws / norms
    keys = np.array([ep["keys"] for ep in episodes])
    values = np.array([ep["values"] for ep in episodes])
    n_ep, pairs = keys.shape
    twins, d = ws.shape[0], ws.shape[1]
    ka = np.swapaxes(k, 1, 2)[:, keys]  # twins × episodes × pairs × d_k
    onehot = np.eye(vb)[values]  # episodes × pairs × V_b
    s = np.zeros((twins, n_ep, vb, d))
    history, deltas = [], []
    for i in range(pairs):
        delta = onehot[:, i] - (s @ ka[:, :, i, :, None])[..., 0]
        history.append(s)
        deltas.append(delta)
        s = s + beta * delta[..., None] * ka[:, :, i, None, :]
    z = gain * (ka @ np.swapaxes(s, 2, 3))  # twins × episodes × pairs × V_b
    top = z.max(axis=3, keepdims=True)
    p = np.exp(z - top)
    total = (top[..., 0] + np.log(p.sum(axis=3)) - (z * onehot).sum(axis=3)).sum(axis=(1, 2))
    dr = gain * (p / p.sum(axis=3, keepdims=True) - onehot)
    d_s = np.swapaxes(dr, 2, 3) @ ka
    d_ka = dr @ s
    for i in reversed(range(pairs)):
        d_delta = beta * (d_s @ ka[:, :, i, :, None])[..., 0]
        d_ka[:, :, i] += beta * (np.swapaxes(d_s, 2, 3) @ deltas[i][..., None])[..., 0]
        d_ka[:, :, i] -= (np.swapaxes(history[i], 2, 3) @ d_delta[..., None])[..., 0]
        d_s -= d_delta[..., None] * ka[:, :, i, None, :]
    d_keys = np.zeros((twins, ws.shape[2], d))
    for t in range(twins):
        np.add.at(d_keys[t], keys.ravel(), d_ka[t].reshape(-1, d))
    d_keys = np.swapaxes(d_keys, 1, 2) / (n_ep * pairs)
    used = np.zeros(ws.shape[2], dtype=bool)
    used[keys.ravel()] = True
    grads = (d_keys - k * (k * d_keys).sum(axis=1, keepdims=True)) / norms
    grads[:, :, ~used] = 0.0
    return total / (n_ep * pairs), grads


def newton_schulz(b):
    x = b / (np.linalg.norm(b) + 1e-7)
    tall = x.shape[0] > x.shape[1]
    if tall:
        x = x.T
    for _ in range(5):
        a = x @ x.T
        x = NS[0] * x + (NS[1] * a + NS[2] * a @ a) @ x
    return x.T if tall else x


class Rule:
    def __init__(self, spec):
        self.spec, self.t, self.m, self.v = spec, 0, None, None

    def step(self, w, g):
        s, lr = self.spec, self.spec["lr"]
        self.t += 1
        name = s["optimizer"]
        if name == "gd":
            return w - lr * g
        if name == "sign":
            return w - lr * np.sign(g)
        if name == "adam":
            if self.m is None:
                self.m, self.v = np.zeros_like(w), np.zeros_like(w)
            self.m = s["beta1"] * self.m + (1 - s["beta1"]) * g
            self.v = s["beta2"] * self.v + (1 - s["beta2"]) * g * g
            m_hat = self.m / (1 - s["beta1"] ** self.t)
            v_hat = self.v / (1 - s["beta2"] ** self.t)
            return w - lr * m_hat / (np.sqrt(v_hat) + s["eps"])
        if name == "muon":
            self.m = g.copy() if self.m is None else s["momentum"] * self.m + g
            return w - lr * newton_schulz(self.m)
        raise SystemExit(f"paired_numpy.py: no numpy version of rule {name}")


def metrics(w, w_rot, q):
    k, _ = keys_of(w)
    k_rot, _ = keys_of(w_rot)
    return {
        "orientation_div": np.linalg.norm(w_rot - q @ w) / np.linalg.norm(w),
        "gram_div": np.linalg.norm(k_rot.T @ k_rot - k.T @ k),
        "axis_concentration": float((k**4).sum(axis=0).mean()),
    }


def replay(trace, stacked):
    """The run of `trace` in numpy, one episode at a time or (`stacked`) every twin and episode
    of a step together: the per-step rows (step, arm, the twins' losses, metrics) and the
    largest relative distance of a final weight matrix from the trace's."""
    c = trace["config"]
    q = np.array(trace["q"])
    arms = list(c["optimizers"])
    twins = [np.array(trace[w]) for _ in arms for w in ("w0", "w0_rot")]
    rules = [Rule(c["optimizers"][a]) for a in arms for _ in range(2)]
    rows = []
    for step in range(c["steps"] + 1):
        losses, grads = [], []
        if step < c["steps"]:
            args = (trace["episodes"][step], c["beta"], c["gain"], c["n_values"])
            if stacked:
                losses, grads = loss_and_grad_stacked(np.stack(twins), *args)
            else:
                losses, grads = zip(*(loss_and_grad(w, *args) for w in twins))
        for i, arm in enumerate(arms):
            rows.append((step, arm, list(losses[2 * i:2 * i + 2]),
                         metrics(twins[2 * i], twins[2 * i + 1], q)))
        if step < c["steps"]:
            twins = [r.step(w, g) for r, w, g in zip(rules, twins, grads)]
    worst = max(
        np.linalg.norm(w - np.array(trace["final"][name])) / np.linalg.norm(w)
        for w, name in zip(twins, [n for a in arms for n in (a, a + "_rot")])
    )
    return rows, worst


def timed(f, runs):
    best, out = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - start)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default="target/release/basis-lab")
    ap.add_argument("--preset", default="default")
    ap.add_argument("--steps", type=int, default=300,
                    help="steps of both runs (the one-episode-at-a-time numpy run takes about "
                         "0.2 s a step)")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    steps = ["--steps", str(args.steps)]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([args.binary, "run", args.preset, *steps, "--quiet", "--out", tmp],
                       check=True, capture_output=True)
        trace = json.load(open(os.path.join(tmp, "trace.json")))
        ours, _ = timed(lambda: subprocess.run(
            [args.binary, "run", args.preset, *steps, "--no-trace", "--quiet", "--out", tmp],
            check=True, capture_output=True), 3)
    recorded = {(m["step"], m["arm"]): m for m in trace["metrics"]}
    c = trace["config"]
    print(f"paired run `{args.preset}` ({c['steps']} steps, {len(c['optimizers'])} arms, "
          f"batch {c['batch']}), load average {load:.2f} before")
    print(f"  basis-lab run, whole process:        {ours:8.2f} s")
    for label, stacked, runs in [("numpy, every twin and episode stacked", True, 2),
                                 ("numpy, one episode at a time", False, 1)]:
        theirs, (rows, worst) = timed(lambda: replay(trace, stacked), runs)
        loss_err = max(abs(losses[0] - recorded[(s, a)]["loss"])
                       for s, a, losses, _ in rows if losses)
        assert worst < 1e-6, f"{label}: final weights differ from the trace's by {worst:.1e}"
        print(f"  {label + ':':<37}{theirs:8.2f} s  ratio {theirs / ours:6.1f}×  (final weights "
              f"within {worst:.0e} of basis-lab's, losses within {loss_err:.0e})")
    print("ratio = numpy's time / basis-lab's; target ≥ 30×")


if __name__ == "__main__":
    main()
