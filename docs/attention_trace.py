#!/usr/bin/env python3
"""Check a `basis-lab attention` trace.json with numpy, independently of the Rust code.

Rebuilds the model from the trace's weights (docs/attention.md describes the layout), then
checks that
  - every run's base model at step 0 has the recorded training and validation loss,
  - each twin's initial W_Q and W_K follow from the base model's (the gauge twin's by the
    recorded rotations, the A = I twin's unchanged),
  - every model's final weights give the recorded final validation loss, and each twin's final
    validation logits lie the recorded relative distance from its base model's.

Usage: python3 docs/attention_trace.py OUT/trace.json
"""

import json
import sys

import numpy as np


def rms(x, g, eps):
    """Per column: x / sqrt(mean(x^2) + eps), times the gain column g."""
    return x / np.sqrt((x * x).mean(axis=0, keepdims=True) + eps) * g


def logits(w, pairs, arch):
    """Last-position logits (classes x n) of the sequences [a, b, =] for the pairs."""
    eps, heads, dh = arch["norm_eps"], arch["heads"], arch["head_dim"]
    tokens = [pairs[:, 0], pairs[:, 1], np.full(len(pairs), arch["classes"])]
    xs = [w["tok_emb"][:, t] + w["pos_emb"][:, [i]] for i, t in enumerate(tokens)]
    for l in range(arch["layers"]):
        m = lambda name: w[f"layer{l}.{name}"]
        ys = [rms(x, m("g_attn"), eps) for x in xs]
        q, k, v = ([m(n) @ y for y in ys] for n in ("w_q", "w_k", "w_v"))
        outs = []
        for t in range(len(xs)):
            att = np.zeros_like(xs[t])
            for h in range(heads):
                r = slice(h * dh, (h + 1) * dh)
                s = np.stack([(q[t][r] * k[u][r]).sum(axis=0) for u in range(t + 1)])
                p = np.exp(s / np.sqrt(dh) - (s / np.sqrt(dh)).max(axis=0))
                p /= p.sum(axis=0)
                att[r] = sum(p[u] * v[u][r] for u in range(t + 1))
            outs.append(xs[t] + m("w_o") @ att)
        xs = []
        for x in outs:
            u = m("w_up") @ rms(x, m("g_mlp"), eps)
            xs.append(x + m("w_down") @ (u / (1 + np.exp(-u))))
    return w["w_u"] @ rms(xs[-1], w["g_final"], eps)


def loss(z, labels):
    top = z.max(axis=0)
    lse = top + np.log(np.exp(z - top).sum(axis=0))
    return float((lse - z[labels, np.arange(z.shape[1])]).mean())


def distance(a, b):
    d = np.linalg.norm(a - b)
    return 0.0 if d == 0 else float(d / (0.5 * (np.linalg.norm(a) + np.linalg.norm(b))))


def close(a, b, tol):
    return abs(a - b) <= tol * max(abs(a), abs(b), 1e-300)


def main(path):
    trace = json.load(open(path))
    assert trace["schema"] == "basis-lab attention trace 1", trace["schema"]
    arch, p = trace["arch"], trace["arch"]["classes"]
    sets = {}
    for name in ("train", "val"):
        pairs = np.array(trace[f"{name}_pairs"])
        sets[name] = (pairs, (pairs[:, 0] + pairs[:, 1]) % p)
    asarray = lambda params: {k: np.array(v, dtype=float) for k, v in params.items()}
    initial = asarray(trace["initial"])
    metrics = trace["metrics"]
    first = {(r["rule"], r["twin"]): r for r in metrics if r["step"] == 0}
    last = {}
    for r in metrics:
        last[(r["rule"], r["twin"])] = r

    for (rule, twin), r in first.items():
        if twin == "base":
            for name, (pairs, labels) in sets.items():
                ours = loss(logits(initial, pairs, arch), labels)
                assert close(ours, r[name]["loss"], 1e-12), (rule, name, ours, r[name]["loss"])

    rotations = [np.array(a) for a in trace["rotations"]]
    heads, dh = arch["heads"], arch["head_dim"]
    final_logits = {}
    for m in trace["models"]:
        for which in ("w_q", "w_k"):
            for l, start in enumerate(m[f"initial_{which}"]):
                start, base = np.array(start), initial[f"layer{l}.{which}"]
                if m["twin"] in ("base", "identity"):
                    assert np.array_equal(start, base), (m["rule"], m["twin"], which, l)
                elif m["twin"] == "gauge":
                    for h in range(heads):
                        r = slice(h * dh, (h + 1) * dh)
                        want = rotations[l * heads + h] @ base[r]
                        assert np.abs(start[r] - want).max() < 1e-14, (m["rule"], which, l, h)
        if m["diverged_at"] is not None:
            continue
        pairs, labels = sets["val"]
        z = logits(asarray(m["final"]), pairs, arch)
        final_logits[(m["rule"], m["twin"])] = z
        rec = last[(m["rule"], m["twin"])]
        assert close(loss(z, labels), rec["val"]["loss"], 1e-10), (m["rule"], m["twin"])

    for (rule, twin), z in final_logits.items():
        if twin != "base" and (rule, "base") in final_logits:
            want = last[(rule, twin)]["logit_distance"]
            ours = distance(final_logits[(rule, "base")], z)
            # numpy's own rounding moves a distance by about 1e-15 of the logits' norm.
            assert abs(ours - want) <= 1e-6 * want + 1e-14, (rule, twin, ours, want)
            print(f"{rule:>12} {twin:>8}: final logit distance {ours:.3e} (trace {want:.3e})")
    print(f"{path}: {len(trace['models'])} models consistent with the recorded metrics")


if __name__ == "__main__":
    main(sys.argv[1])
