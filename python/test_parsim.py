"""Tests of the Python module `parsim` (run by ctest as test_python): every function returns what the command line
prints with --format json, keyword names follow the flags, bad input raises ValueError with the CLI's one-line message,
and the simulation runs without the GIL.

Environment (set by tests/CMakeLists.txt): PYTHONPATH=build/python, PARSIM_BIN=build/parsim,
PARSIM_TEST_DATA=tests/data."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import xml.dom.minidom

import parsim

BIN = os.environ["PARSIM_BIN"]
DATA = os.environ["PARSIM_TEST_DATA"]


def cli(*args):
    """Runs the parsim binary: (exit status, stdout, stderr)."""
    p = subprocess.run([BIN, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    rc, out, err = cli(*args, "--format", "json")
    assert rc == 0, err
    return json.loads(out)


class Predict(unittest.TestCase):
    def test_same_dict_as_the_cli(self):
        # The README's "done" command: the dict equals the CLI's JSON (same engine, same field tables), so every
        # number is bit-identical, not merely close.
        d = parsim.predict(model="llama7b", plan="tp8pp2dp4")
        self.assertEqual(d, cli_json("--model", "llama7b", "--plan", "tp8pp2dp4"))
        self.assertEqual(d["step_time_s"], cli_json("--model", "llama7b", "--plan", "tp8pp2dp4")["step_time_s"])

    def test_keywords_follow_the_flags(self):
        # --gpus-per-node → gpus_per_node, a switch (--sp) → True, numbers as numbers, --tokens as a string.
        d = parsim.predict(model="llama3-8b", plan="tp2pp2dp8", gpus_per_node=4, sp=True, seq=4096,
                           recompute="selective", tokens="2T")
        c = cli_json("--model", "llama3-8b", "--plan", "tp2pp2dp8", "--gpus-per-node", "4", "--sp", "--seq", "4096",
                     "--recompute", "selective", "--tokens", "2T")
        self.assertEqual(d, c)
        self.assertIn("days", d["train"])
        # A comma-separated list keyword (--recompute-modules) and its one-line error.
        self.assertEqual(parsim.predict(model="llama7b", plan="tp8pp2dp4", recompute="selective",
                                        recompute_modules="core_attn,mlp"),
                         cli_json("--model", "llama7b", "--plan", "tp8pp2dp4", "--recompute", "selective",
                                  "--recompute-modules", "core_attn,mlp"))
        with self.assertRaisesRegex(ValueError, "moe_act: llama2-7b is a dense model"):
            parsim.predict(model="llama7b", plan="tp8pp2dp4", recompute="selective", recompute_modules="moe_act")
        # None means "not given": the option's default.
        self.assertEqual(parsim.predict(model="llama7b", plan="tp8pp2dp4", gbs=None),
                         parsim.predict(model="llama7b", plan="tp8pp2dp4"))

    def test_hybrid_model_from_its_config(self):
        # A Hugging Face nemotron_h config (Nemotron 3 Nano: 23 Mamba-2, 6 attention, 23 MoE blocks) through the
        # module: the CLI's dict, with the hybrid block counts; a plan the mixer cannot split is the CLI's error.
        cfg = os.path.join(DATA, "models", "nemotron-3-nano-30b-a3b.config.json")
        d = parsim.predict(model=cfg, plan="tp1pp1dp8ep8etp1zero1", gpu="h100", seq=4096, gbs=64, mbs=1)
        self.assertEqual(d, cli_json("--model", cfg, "--plan", "tp1pp1dp8ep8etp1zero1", "--gpu", "h100", "--seq",
                                     "4096", "--gbs", "64", "--mbs", "1"))
        self.assertEqual(d["model"]["hybrid_layers"], {"mamba": 23, "attention": 6, "mlp": 0, "moe": 23})
        with self.assertRaisesRegex(ValueError, "tp16 does not divide the 64 Mamba heads and 8 groups"):
            parsim.predict(model=cfg, plan="tp16pp1dp1ep8etp1", gpu="h100", gpus_per_node=16, seq=4096, gbs=16)

    def test_bad_input_raises_value_error_with_the_cli_message(self):
        for args, kw in [(("--model", "llama7b", "--plan", "tp3"), dict(model="llama7b", plan="tp3")),
                         (("--model", "no-such-model", "--plan", "tp8"), dict(model="no-such-model", plan="tp8")),
                         (("--model", "llama7b", "--plan", "tp8", "--gbs", "0"), dict(model="llama7b", plan="tp8", gbs=0))]:
            rc, out, err = cli(*args)
            self.assertEqual(rc, 2)
            self.assertTrue(err.startswith("parsim: error: "))
            with self.assertRaises(ValueError) as e:
                parsim.predict(**kw)
            self.assertEqual(str(e.exception), err[len("parsim: error: "):].rstrip("\n"))
        # An unknown keyword is an error, as an unknown flag is (never silently ignored).
        with self.assertRaises(ValueError) as e:
            parsim.predict(model="llama7b", plan="tp8", gpus_per_nod=4)
        self.assertIn("gpus_per_nod", str(e.exception))
        # A value Python cannot express as a flag value.
        with self.assertRaises(ValueError):
            parsim.predict(model="llama7b", plan="tp8", seq={"a": 1})

    def test_svg_keyword_writes_a_well_formed_picture(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "step.svg")
            parsim.predict(model="llama7b", plan="tp8pp2dp4", gbs=16, svg=path)
            doc = xml.dom.minidom.parse(path)
            self.assertEqual(doc.documentElement.tagName, "svg")
            self.assertEqual(doc.getElementsByTagName("script").length, 0)

    def test_docstrings(self):
        for name in ("predict", "sweep", "profile", "calibrate", "validate", "merge"):
            self.assertTrue(getattr(parsim, name).__doc__, name)
        self.assertTrue(parsim.__doc__)
        self.assertRegex(parsim.__version__, r"^\d+\.\d+\.\d+$")


class Sweep(unittest.TestCase):
    ARGS = dict(model="llama2-7b", gpus=8, gbs=32, tp="2,8", pp="1", recompute="none", mbs="1", top=3)

    def test_same_dict_as_the_cli(self):
        d = parsim.sweep(**self.ARGS)
        c = cli_json("sweep", "--model", "llama2-7b", "--gpus", "8", "--gbs", "32", "--tp", "2,8", "--pp", "1",
                     "--recompute", "none", "--mbs", "1", "--top", "3")
        # Equal but for "timing" (how long this run took: wall and CPU seconds differ run to run).
        self.assertEqual(d.pop("timing").keys(), c.pop("timing").keys())
        self.assertEqual(d, c)
        self.assertEqual(len(d["results"]), 3)
        # Lists are accepted for comma lists.
        e = parsim.sweep(**{**self.ARGS, "tp": [2, 8], "pp": [1], "mbs": [1]})
        e.pop("timing")
        self.assertEqual(e, d)

    def test_releases_the_gil(self):
        # While a sweep runs in another thread, this thread keeps running Python. With the GIL held for the whole
        # sweep, no iteration of the loop below could start between the sweep's start and end marks (the first
        # switch interval, 5 ms, aside); released, the loop runs throughout.
        marks = {}

        def work():
            marks["t0"] = time.perf_counter()
            parsim.sweep(model="llama2-7b", gpus=64, threads=1, top=1)
            marks["t1"] = time.perf_counter()

        t = threading.Thread(target=work)
        stamps = []
        t.start()
        while t.is_alive():
            stamps.append(time.perf_counter())
        t.join()
        inside = [s for s in stamps if marks["t0"] + 0.02 < s < marks["t1"] - 0.02]
        self.assertGreater(marks["t1"] - marks["t0"], 0.1)  # long enough to tell
        self.assertGreater(len(inside), 100)


class CompareAndAdvice(unittest.TestCase):
    def test_compare_as_the_cli_and_predict_with_several_plans(self):
        d = parsim.compare(model="llama7b", plan=["tp8pp2dp4", "tp4pp4dp4"])
        self.assertEqual(d, cli_json("compare", "--model", "llama7b", "--plan", "tp8pp2dp4", "--plan", "tp4pp4dp4"))
        # `parsim predict` with a comma list of plans is compare.
        self.assertEqual(d, cli_json("--model", "llama7b", "--plan", "tp8pp2dp4,tp4pp4dp4"))
        self.assertEqual(parsim.compare(model="llama7b", plan="tp8pp2dp4,tp4pp4dp4"), d)
        self.assertEqual(len(d["plans"]), 2)
        # Each column is the plan's own prediction.
        self.assertEqual(d["plans"][1]["step_time_s"],
                         parsim.predict(model="llama7b", plan="tp4pp4dp4")["step_time_s"])
        with self.assertRaises(ValueError):
            parsim.compare(model="llama7b", plan=["tp8pp2dp4"])

    def test_advice_only_when_asked_in_json(self):
        self.assertNotIn("advice", parsim.predict(model="llama7b", plan="tp8pp2dp4"))
        a = parsim.predict(model="llama7b", plan="dp8", gbs=8, advice=True)["advice"]
        self.assertFalse(a["notes"][0].find("does not fit by") == -1)
        self.assertIn("zero1", [r["change"] for r in a["memory_remedies"]])

    def test_headroom_keeps_a_margin(self):
        # With 20 GiB of headroom only plans whose peak stays 20 GiB below capacity remain; none is added.
        base = dict(model="llama2-7b", gpus=8, gbs=32, pp="1", mbs="1,2", all=True)
        a = parsim.sweep(**base)
        b = parsim.sweep(**base, headroom_gib=20)
        self.assertLess(b["feasible"], a["feasible"])
        for r in b["results"]:
            self.assertLessEqual(r["memory"]["peak_gib"], r["memory"]["capacity_gib"] - 20)
        kept = [r for r in a["results"] if r["memory"]["peak_gib"] <= r["memory"]["capacity_gib"] - 20]
        self.assertEqual([r["plan"] for r in b["results"]], [r["plan"] for r in kept])


class Measure(unittest.TestCase):
    def test_profile_and_calibrate_as_the_cli(self):
        trace = os.path.join(DATA, "profiles", "hta-nccl-meta-2rank-a100", "nccl_data.json.gz")
        self.assertEqual(parsim.profile(trace), cli_json("profile", trace))
        self.assertEqual(parsim.profile([trace]), parsim.profile(trace))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ranks.svg")
            prof = parsim.profile(trace, svg=path)
            doc = xml.dom.minidom.parse(path)
            labels = [t.firstChild.data for t in doc.getElementsByTagName("text")
                      if t.firstChild and t.firstChild.data.startswith("rank ")]
            self.assertEqual(len(labels), len(prof["ranks"]))  # one bar label per measured rank
        table = os.path.join(DATA, "nccl", "aws_p5_2node_16xH100_all_reduce.txt")
        c = parsim.calibrate(table)
        self.assertEqual(c, cli_json("calibrate", table))
        self.assertEqual(c["ranks"], 16)
        gemm = os.path.join(DATA, "hardware", "xla_matmul_perf_table.csv")
        g = parsim.calibrate(gemm, device="b200")
        self.assertEqual(g, cli_json("calibrate", gemm, "--device", "b200"))
        self.assertEqual(g["kind"], "gemm")
        with self.assertRaises(ValueError):
            parsim.calibrate(gemm)  # three devices, none picked
        with self.assertRaises(ValueError) as e:
            parsim.calibrate("no-such-file.txt")
        self.assertIn("no-such-file.txt", str(e.exception))

    def test_gemm_sweep_tool_lists_the_calibration_shapes(self):
        # tools/gemm_sweep.py measures on a GPU (none here); its shape list is XLA's table's, so a sweep it makes is
        # comparable with tests/data/hardware/xla_matmul_perf_table.csv: 3 batches x 5^3 sizes = 375.
        tool = os.path.join(os.path.dirname(DATA), "..", "tools", "gemm_sweep.py")
        out = subprocess.run([sys.executable, tool, "--dry-run"], capture_output=True, text=True, check=True).stdout
        self.assertTrue(out.rstrip().endswith("375 shapes"))
        self.assertIn("b=4 m=4096 n=4096 k=4096", out)

    def test_validate_as_the_cli(self):
        trace = os.path.join(DATA, "profiles", "hta-nccl-meta-2rank-a100", "nccl_data.json.gz")
        d = parsim.validate(profile=trace, model="llama7b", plan="dp2", gpu="a100", gbs=2)
        c = cli_json("validate", "--profile", trace, "--model", "llama7b", "--plan", "dp2", "--gpu", "a100",
                     "--gbs", "2")
        self.assertEqual(d, c)
        self.assertIn("relative_error", d)


if __name__ == "__main__":
    unittest.main()
