"""Make a JAX CPU XPlane sample: ``python tests/data/xplane/gen_jax_cpu.py OUT_DIR``.

Needs jax (not a traceconv dependency). Traces a few jitted steps of a small MLP on the CPU
with ``jax.profiler.trace`` (Python tracer off, so the file stays small) and copies the
``*.xplane.pb`` it wrote to ``OUT_DIR/jax_cpu_mlp.xplane.pb``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path


def main(out_dir: str) -> Path:
    import jax  # (imported here: pytest collects this file, and jax is not a dependency)
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    w1 = jax.random.normal(key, (256, 512))
    w2 = jax.random.normal(key, (512, 10))

    @jax.jit
    def step(x, w1, w2):
        hidden = jax.nn.relu(x @ w1)
        loss = jnp.mean((hidden @ w2) ** 2)
        return loss, jax.grad(lambda a: jnp.mean(jax.nn.relu(x @ a) @ w2))(w1)

    x = jnp.ones((64, 256))
    step(x, w1, w2)[0].block_until_ready()   # compile outside the trace
    with tempfile.TemporaryDirectory() as logdir:
        options = jax.profiler.ProfileOptions()
        options.python_tracer_level = 0
        with jax.profiler.trace(logdir, profiler_options=options):
            for i in range(5):
                with jax.profiler.StepTraceAnnotation("train", step_num=i):
                    loss, grad = step(x, w1, w2)
                    w1 = w1 - 0.01 * grad
                    loss.block_until_ready()
        written = next(Path(logdir).rglob("*.xplane.pb"))
        out = Path(out_dir) / "jax_cpu_mlp.xplane.pb"
        shutil.copyfile(written, out)
    return out


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else "."))
