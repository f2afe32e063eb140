#!/usr/bin/env python3
"""One training step of the attention twins' transformer in JAX/XLA (f64, CPU) beside basis-lab's.

The JAX side is the same model as src/attention/model.rs (docs/attention.md): 2 layers, 4 heads
of 16, d 64, MLP 256, pre-norm RMSNorm with gains, SiLU, causal softmax over the 3 positions,
logits at the last position only, mean cross-entropy, and the same last-layer shortcut (queries,
W_O and the MLP of the last layer only at the last position, as the Rust model computes them).
It is timed twice: as the model is written (every position of every sequence), and with
basis-lab's other two shortcuts: position 0 computed once per distinct first token (it attends
only to itself) and gathered where positions 1 and 2 read its key and value, and the first
layer's queries, keys and values computed once per distinct (position, token) input. It starts
from the weights and the training batch of `basis-lab attention attention` (seed 0, read from
its trace.json), checks that both forms give the recorded loss at step 0, then takes full-batch
Adam steps (lr 1e-3, β 0.9/0.999, ε 1e-8) inside one jit-compiled `lax.fori_loop`; compile time
is excluded and the fastest of three timed loops counts.

basis-lab's figure is `basis-lab bench --only attention`: forward, backward and the Adam update
of one model, the fastest of 30 batches. Both sides are pinned to the same core(s) with
`taskset`, and XLA is told to use as many threads as it has cores. The two-core row also gives
each side's speed-up over its own one-core time (basis-lab's target: 1.8× on a quiet machine).

Usage: python3 benches/attention_jax.py [--binary target/release/basis-lab] [--steps 40]
       [--no-jax]
Needs: pip install jax (CPU), except with --no-jax (basis-lab's columns only).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def jax_step_seconds(trace_path, steps, cores, shared):
    """Seconds per Adam step of the JAX model on `cores` (a child process: XLA's thread count
    is fixed when it loads), with or without basis-lab's shortcuts."""
    code = f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); " \
           f"import attention_jax as a; print(a.time_jax({trace_path!r}, {steps}, {shared}))"
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


def time_jax(trace_path, steps, shared):
    import jax
    import jax.numpy as jnp
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    trace = json.load(open(trace_path))
    arch = trace["arch"]
    p, heads, dh, eps = arch["classes"], arch["heads"], arch["head_dim"], arch["norm_eps"]
    d = heads * dh
    layers = arch["layers"]
    params = {k: jnp.asarray(np.array(v, dtype=np.float64)) for k, v in trace["initial"].items()}
    pairs = np.array(trace["train_pairs"])
    tokens = jnp.asarray(np.stack([pairs[:, 0], pairs[:, 1], np.full(len(pairs), p)]))
    labels = jnp.asarray((pairs[:, 0] + pairs[:, 1]) % p)
    n = len(pairs)

    def rms(x, g):
        return x / jnp.sqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * g

    # Shared first positions: position 0 attends only to itself, so it is computed once per
    # distinct first token (rows of x0) and gathered by `first_col` where later positions read
    # it.
    first_tokens, first_col = np.unique(pairs[:, 0], return_inverse=True)
    first_tokens, first_col = jnp.asarray(first_tokens), jnp.asarray(first_col)
    # The first layer's input is a (position, token) pair's embedding, so its queries, keys and
    # values are computed once per distinct pair: per second token at position 1 (rows of the
    # table gathered by `second_col`), once for `=` at position 2.
    second_tokens, second_col = np.unique(pairs[:, 1], return_inverse=True)
    second_tokens, second_col = jnp.asarray(second_tokens), jnp.asarray(second_col)

    def shared_loss_fn(w):
        x0 = w["tok_emb"].T[first_tokens] + w["pos_emb"].T[0]
        x = w["tok_emb"].T[tokens[1:]] + w["pos_emb"].T[1:, None, :]
        for l in range(layers):
            m = lambda name: w[f"layer{l}.{name}"]
            last = l == layers - 1
            g = m("g_attn")[:, 0]
            y0 = rms(x0, g)
            if l == 0:
                emb, pos = w["tok_emb"].T, w["pos_emb"].T
                y1, y2 = rms(emb[second_tokens] + pos[1], g), rms(emb[p] + pos[2], g)

                def later(name):
                    wt = m(name).T
                    return jnp.stack([(y1 @ wt)[second_col], jnp.broadcast_to(y2 @ wt, (n, d))])
            else:
                y = rms(x, g)

                def later(name):
                    return y @ m(name).T
            k0, v0 = y0 @ m("w_k").T, y0 @ m("w_v").T
            k = jnp.concatenate([k0[first_col][None], later("w_k")]).reshape(3, n, heads, dh)
            v = jnp.concatenate([v0[first_col][None], later("w_v")]).reshape(3, n, heads, dh)
            qpos = [2] if last else [1, 2]
            q = later("w_q")[jnp.array(qpos) - 1].reshape(len(qpos), n, heads, dh)
            s = jnp.einsum("tnhd,unhd->tunh", q, k) / jnp.sqrt(dh)
            mask = jnp.array([[u <= t for u in range(3)] for t in qpos])[:, :, None, None]
            s = jnp.where(mask, s, -jnp.inf)
            att = jnp.einsum("tunh,unhd->tnhd", jax.nn.softmax(s, axis=1), v)
            mid = x[jnp.array(qpos) - 1] + att.reshape(len(qpos), n, heads * dh) @ m("w_o").T
            u = rms(mid, m("g_mlp")[:, 0]) @ m("w_up").T
            x = mid + (u * jax.nn.sigmoid(u)) @ m("w_down").T
            if not last:
                # Position 0's attention output is its own value (one key, weight 1).
                mid0 = x0 + v0 @ m("w_o").T
                u0 = rms(mid0, m("g_mlp")[:, 0]) @ m("w_up").T
                x0 = mid0 + (u0 * jax.nn.sigmoid(u0)) @ m("w_down").T
        z = rms(x[-1], w["g_final"][:, 0]) @ w["w_u"].T
        lse = jax.nn.logsumexp(z, axis=1)
        return jnp.mean(lse - z[jnp.arange(n), labels])

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
    want = recorded["train"]["loss"]
    for f in (loss_fn, shared_loss_fn):
        got = float(jax.jit(f)(params))
        assert abs(got - want) <= 1e-12 * abs(want), (f.__name__, got, want)

    lr, b1, b2, adam_eps = 1e-3, 0.9, 0.999, 1e-8
    grad_fn = jax.value_and_grad(shared_loss_fn if shared else loss_fn)

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
    ap.add_argument("--no-jax", action="store_true", help="time basis-lab only (no jax needed)")
    args = ap.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_jax:
            subprocess.run(
                [args.binary, "attention", "attention", "--seeds", "1", "--steps", "1",
                 "--quiet", "--out", tmp],
                check=True, capture_output=True,
            )
        trace = os.path.join(tmp, "trace.json")
        rows = []
        load = os.getloadavg()[0]
        for use in ([cores[0]], cores[:2]) if len(cores) > 1 else ([cores[0]],):
            if args.no_jax:
                plain = shared = float("nan")
            else:
                plain = jax_step_seconds(trace, args.steps, use, False)
                shared = jax_step_seconds(trace, args.steps, use, True)
            ours = ours_step_seconds(args.binary, use).get(len(use))
            if ours is None:
                sys.exit(f"no 'attention train step, {len(use)} thread(s)' line from bench")
            rows.append((len(use), plain, shared, ours))
    print(f"attention training step (883 sequences, Adam), load average {load:.2f} at the start")
    print(f"{'cores':>5} {'JAX/XLA':>10} {'ratio':>6} {'JAX/XLA shared':>15} {'ratio':>6} "
          f"{'basis-lab':>10} {'speed-up: JAX':>14} {'shared':>7} {'basis-lab':>10}")
    one = rows[0]
    for n, plain, shared, ours in rows:
        # Each side's one-core time over its time on these cores (blank on the one-core row).
        ups = "" if n == 1 else (f"{one[1] / plain:13.2f}× {one[2] / shared:6.2f}× "
                                 f"{one[3] / ours:9.2f}×")
        print(f"{n:>5} {plain * 1e3:7.2f} ms {plain / ours:5.2f}× {shared * 1e3:12.2f} ms "
              f"{shared / ours:5.2f}× {ours * 1e3:7.2f} ms {ups}")
    print("basis-lab runs as many threads as cores; ratio = JAX's time / basis-lab's (above 1:")
    print("basis-lab is faster); speed-up = one core's time / two cores' (basis-lab's target 1.8×).")
    print("JAX/XLA computes every position of every sequence, as the model")
    print("is written; 'shared' computes position 0 once per distinct first token and the first")
    print("layer's queries, keys and values once per (position, token), as basis-lab does")
    print("(docs/attention.md).")


if __name__ == "__main__":
    main()
