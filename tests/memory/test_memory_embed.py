"""The feature-hashing embedder: deterministic, unit-length, shaped for commands and paths."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard.memory.embed import CallableEmbedder, Embedder, HashingEmbedder

E = HashingEmbedder()


def cos(a: str, b: str) -> float:
    return float(E.embed(a) @ E.embed(b))


class TestShape:
    def test_float32_unit_vector_of_dim(self) -> None:
        v = HashingEmbedder(dim=64).embed("bash:git status")
        assert v.dtype == np.float32 and v.shape == (64,)
        assert float(v @ v) == pytest.approx(1.0, abs=1e-5)

    def test_vectors_are_read_only_and_cached(self) -> None:
        v = E.embed("bash:ls -la")
        assert v is E.embed("bash:ls -la")
        with pytest.raises(ValueError):
            v[0] = 1.0

    @settings(max_examples=200, deadline=None)
    @given(st.text(max_size=300))
    def test_any_text_gives_a_finite_unit_vector(self, text: str) -> None:
        v = HashingEmbedder(dim=32, cache_size=0).embed(text)
        assert np.all(np.isfinite(v))
        assert float(v @ v) == pytest.approx(1.0, abs=1e-4)

    @settings(max_examples=200, deadline=None)
    @given(st.text(max_size=300), st.sampled_from([8, 32, 256]))
    def test_the_sparse_form_holds_the_same_float32_numbers(self, text: str, dim: int) -> None:
        """What the snapshot reader searches with (no numpy) is the writer's vector, bit for bit."""
        e = HashingEmbedder(dim=dim, cache_size=0)
        dense = e.embed(text)
        nonzero = np.flatnonzero(dense)
        assert e.sparse(text) == list(zip(nonzero.tolist(), dense[nonzero].tolist(), strict=True))

    def test_cancelled_features_give_a_fixed_unit_vector(self) -> None:
        from guard.memory import embed

        assert embed._unit([(3, 0.0), (5, 0.0)]) == [(0, 1.0)]

    def test_name_carries_the_scheme_version(self) -> None:
        embedder: Embedder = E
        assert embedder.name == "hashing-v1" and embedder.dim == 256

    def test_rejects_a_tiny_dimension(self) -> None:
        with pytest.raises(ValueError):
            HashingEmbedder(dim=2)


class TestStability:
    def test_same_vector_in_another_process(self) -> None:
        """crc32, not the per-process salted hash(): stored vectors stay valid across runs."""
        text = "bash:rm -rf /tmp/build && make -j8 all"
        code = (
            f"from guard.memory.embed import HashingEmbedder;print(HashingEmbedder().embed({text!r}).tobytes().hex())"
        )
        env = {**os.environ, "PYTHONHASHSEED": "123"}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
        assert out.stdout.strip() == E.embed(text).tobytes().hex()


class TestSimilarity:
    @pytest.mark.parametrize(
        ("a", "b"),
        [
            ("bash:rm -rf /tmp/build", "bash:rm -rf /tmp/build2"),
            ("bash:git status", "bash:git status --short"),
            ("bash:pytest tests/a.py", "bash:pytest tests/b.py"),
            ("bash:rm -rf build", "bash:rm -fr build"),
            ("write:src/app.py", "write:src/util.py"),
        ],
    )
    def test_variants_of_one_operation_are_similar(self, a: str, b: str) -> None:
        assert cos(a, b) >= 0.80

    @pytest.mark.parametrize(
        ("a", "b"),
        [
            ("bash:rm -rf /tmp/build", "bash:rm -rf /"),
            ("bash:rm -rf build", "bash:rm -rf ~"),
            ("bash:rm -rf /tmp/build && make -j8 all", "bash:rm -rf / --no-preserve-root"),
            ("bash:npm test", "bash:npm publish"),
            ("bash:cat ./README.md", "bash:cat ~/.ssh/id_rsa"),
            ("write:src/app.py", "write:/etc/passwd"),
            ("bash:rm -rf /tmp/build && make -j8 all", "bash:git status"),
        ],
    )
    def test_different_or_more_dangerous_targets_stay_apart(self, a: str, b: str) -> None:
        assert cos(a, b) < 0.80

    def test_path_shape_features_are_explicit(self) -> None:
        names = {f for f, _ in E.features("bash:sudo rm -rf / ~/.ssh /etc/hosts /tmp/x ./y ../z")}
        assert {"h=rm", "p=root", "p=home", "p=home/.ssh", "p=sys", "p=sys/etc", "p=temp", "p=rel", "p=parent"} <= names


class TestCallableEmbedder:
    def test_normalises_and_caches(self) -> None:
        calls: list[str] = []

        def fn(text: str) -> list[float]:
            calls.append(text)
            return [3.0, 4.0, 0.0]

        e = CallableEmbedder("toy-v1", 3, fn)
        assert e.embed("x").tolist() == pytest.approx([0.6, 0.8, 0.0])
        e.embed("x")
        assert calls == ["x"]

    def test_wrong_length_is_an_error(self) -> None:
        with pytest.raises(ValueError, match="expected 4"):
            CallableEmbedder("toy-v1", 4, lambda t: [1.0]).embed("x")
