#!/usr/bin/env python3
"""One training step of the attention twins' transformer in JAX/XLA (f64, CPU) beside basis-lab's.

The JAX side is the same model as src/attention/model.rs (docs/attention.md): 2 layers, 4 heads
of 16, d 64, MLP 256, pre-norm RMSNorm with gains, SiLU, causal softmax over the 3 positions,
logits at the last position only, mean cross-entropy, and the same last-layer shortcut (queries,
W_O and the MLP of the last layer only at the last position, as the Rust model computes them).
It starts from the weights and the training batch of `basis-lab attention attention` (seed 0,
read from its trace.json), checks that its loss at step 0 is the recorded one, then takes full-
batch Adam steps (lr 1e-3, β 0.9/0.999, ε 1e-8) inside one jit-compiled `lax.fori_loop`;
compile time is excluded and the fastest of three timed loops counts.

basis-lab's figure is `basis-lab bench --only attention`: forward, backward and the Adam update
of one model, the fastest of 30 batches. Both sides are pinned to the same core(s) with
`os.sched_setaffinity`, and XLA is told to use as many threads as it has cores.

Usage: python3 benches/attention_jax.py [--binary target/release/basis-lab] [--steps 40]
Needs: pip install jax (CPU).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def jax_step_seconds(trace_path, steps, cores):
    """Seconds per Adam step of the JAX model on `cores` (a child process: XLA's thread count
    is fixed when it loads)."""
    code = f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); " \
           f"import attention_jax as a; print(a.time_jax({trace_path!r}, {steps}))"
    env = dict(os.environ)
    env["XLA_FLAGS"] = (
        f"--xla_force_host_platform_device_count=1 "
        f"--xla_cpu_multi_thread_eigen={'true' if len(cores) > 1 else 'false'} "
        f"intra_op_parallelism_threads={len(cores)}"
    )
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run(
        ["taskset", "-c", ",".join(map(str, cores)), sys.executable, "-c", code],
        env=env, capture_output=True, text=True, check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def time_jax(trace_path, steps):
    import jax
    import jax.numpy as jnp
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    trace = json.load(open(trace_path))
    arch = trace["arch"]
    p, heads, dh, eps = arch["classes"], arch["heads"], arch["head_dim"], arch["norm_eps"]
    layers = arch["layers"]
    params = {k: jnp.asarray(np.array(v, dtype=np.float64)) for k, v in trace["initial"].items()}
    pairs = np.array(trace["train_pairs"])
    tokens = jnp.asarray(np.stack([pairs[:, 0], pairs[:, 1], np.full(len(pairs), p)]))
    labels = jnp.asarray((pairs[:, 0] + pairs[:, 1]) % p)
    n = len(pairs)

    def rms(x, g):
        return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * g

    def loss_fn(w):
        # x: (positions, n, d), row vectors; w[...] are the trace's d_out × d_in matrices.
        x = w["tok_emb"].T[tokens] + w["pos_emb"].T[:, None, :]
        for l in range(layers):
            m = lambda name: w[f"layer{l}.{name}"]
            last = l == layers - 1
            y = rms(x, m("g_attn")[:, 0])
            k = (y @ m("w_k").T).reshape(3, n, heads, dh)
            v = (y @ m("w_v").T).reshape(3, n, heads, dh)
            qpos = [2] if last else [0, 1, 2]
            q = (y[jnp.array(qpos)] @ m("w_q").T).reshape(len(qpos), n, heads, dh)
            s = jnp.einsum("tnhd,unhd->tunh", q, k) / jnp.sqrt(dh)
            mask = jnp.array([[u <= t for u in range(3)] for t in qpos])[:, :, None, None]
            s = jnp.where(mask, s, -jnp.inf)
            att = jnp.einsum("tunh,unhd->tnhd", jax.nn.softmax(s, axis=1), v)
            mid = x[jnp.array(qpos)] + att.reshape(len(qpos), n, heads * dh) @ m("w_o").T
            u = rms(mid, m("g_mlp")[:, 0]) @ m("w_up").T
            x = mid + (u * jax.nn.sigmoid(u)) @ m("w_down").T
        z = rms(x[-1], w["g_final"][:, 0]) @ w["w_u"].T
        lse = jax.nn.logsumexp(z, axis=1)
        return jnp.mean(lse - z[jnp.arange(n), labels])

    recorded = next(r for r in trace["metrics"] if r["step"] == 0 and r["twin"] == "base")
    first = float(jax.jit(loss_fn)(params))
    want = recorded["train"]["loss"]
    assert abs(first - want) <= 1e-12 * abs(want), (first, want)

    lr, b1, b2, adam_eps = 1e-3, 0.9, 0.999, 1e-8
    grad_fn = jax.value_and_grad(loss_fn)

    def step(i, state):
        w, mom, var = state
        _, g = grad_fn(w)
        t = i + 1
        mom = jax.tree.map(lambda a, b: b1 * a + (1 - b1) * b, mom, g)
        var = jax.tree.map(lambda a, b: b2 * a + (1 - b2) * b * b, var, g)
        bc1, bc2 = 1 - b1**t, 1 - b2**t
        w = jax.tree.map(
            lambda x, a, b: x - lr * (a / bc1) / (jnp.sqrt(b / bc2) + adam_eps), w, mom, var
        )
        return w, mom, var

    @jax.jit
    def train(state):
        return jax.lax.fori_loop(0, steps, step, state)

    zeros = jax.tree.map(jnp.zeros_like, params)
    state = (params, zeros, zeros)
    jax.block_until_ready(train(state))
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        jax.block_until_ready(train(state))
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def ours_step_seconds(binary, cores):
    """basis-lab's seconds per training step, by thread count, from `bench --only attention`."""
    out = subprocess.run(
        ["taskset", "-c", ",".join(map(str, cores)), binary, "bench", "--only", "attention"],
        capture_output=True, text=True, check=True,
    ).stdout
    found = {}
    for line in out.splitlines():
        hit = re.match(r"attention train step.*?(\d+) thread.*?([\d.]+) (ms|s) ", line)
        if hit:
            scale = 1e-3 if hit.group(3) == "ms" else 1.0
            found[int(hit.group(1))] = float(hit.group(2)) * scale
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default="target/release/basis-lab")
    ap.add_argument("--steps", type=int, default=40, help="Adam steps per timed JAX loop")
    args = ap.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [args.binary, "attention", "attention", "--seeds", "1", "--steps", "1",
             "--quiet", "--out", tmp],
            check=True, capture_output=True,
        )
        trace = os.path.join(tmp, "trace.json")
        rows = []
        for use in ([cores[0]], cores[:2]) if len(cores) > 1 else ([cores[0]],):
            jax_s = jax_step_seconds(trace, args.steps, use)
            ours = ours_step_seconds(args.binary, use)
            rows.append((len(use), jax_s, ours))
    load = os.getloadavg()[0]
    print(f"attention training step (883 sequences, Adam), load average {load:.2f} before")
    print(f"{'cores':>5} {'JAX/XLA':>10} {'basis-lab 1 thread':>19} {'ratio':>6} "
          f"{'basis-lab 2 threads':>20} {'ratio':>6}")
    for n, jax_s, ours in rows:
        one, two = ours.get(1), ours.get(2) if n > 1 else None
        cell = lambda s: f"{s * 1e3:8.2f} ms" if s else f"{'—':>11}"
        ratio = lambda s: f"{jax_s / s:5.2f}×" if s else f"{'—':>6}"
        print(f"{n:>5} {jax_s * 1e3:7.2f} ms {cell(one):>19} {ratio(one)} "
              f"{cell(two):>20} {ratio(two)}")
    print("ratio = JAX's time / basis-lab's (above 1: basis-lab is faster)")


if __name__ == "__main__":
    main()
