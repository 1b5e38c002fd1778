"""Mutated inputs: whatever the bytes, pbus-gen reports a GenError (one
line, exit 1) or succeeds; it never fails with another exception. A seeded,
deterministic mutation run over the demo files, the hardware-bound
deployment included (a quick stand-in for the fuzz target to come)."""

import random

import pytest

from pbustest.gen import ROOT, build, write
from pbusgen.errors import GenError

FIDL = (ROOT / "examples" / "psu" / "psu.fidl").read_text()
FDEPL = (ROOT / "examples" / "psu" / "psu.fdepl").read_text()
FDEPL_HW = (ROOT / "examples" / "psu" / "psu-hw.fdepl").read_text()
ALPHABET = list("{}[]()<>*@=,.:;\"'/\\-+0123456789 \nabcXYZ_^") + [
    "attribute", "struct", "field", "Default", "Integer", "extends", "<**", "**>",
    "/*", "//", "0x", "minInt", "readonly", "\u00e9"]
# ... and for the hardware-bound deployment, words of its keys and values.
ALPHABET_HW = ALPHABET + ["HwBinding", "HwLine", "HwChannel", "gpio_input",
                          "pwm_duty", "i2c_register", "1e400", "0x400", "\u0001"]


def mutate(text: str, rng: random.Random, alphabet=ALPHABET) -> str:
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(text))
        op = rng.randrange(3)
        if op == 0:
            text = text[:i] + text[i + rng.randint(1, 8):]
        elif op == 1:
            text = text[:i] + rng.choice(alphabet) + text[i:]
        else:
            j = rng.randrange(len(text))
            text = text[:i] + text[j:j + rng.randint(1, 20)] + text[i:]
    return text


@pytest.mark.parametrize("target", ["fidl", "fdepl", "fdepl-hw"])
def test_mutations_give_clean_errors(tmp_path, monkeypatch, target):
    monkeypatch.chdir(tmp_path)
    rng = random.Random({"fidl": 1234, "fdepl": 5678, "fdepl-hw": 9012}[target])
    errors = 0
    for _ in range(200):
        fidl = mutate(FIDL, rng) if target == "fidl" else FIDL
        if target == "fdepl-hw":
            fdepl = mutate(FDEPL_HW, rng, ALPHABET_HW)
        else:
            fdepl = mutate(FDEPL, rng) if target == "fdepl" else FDEPL
        write(tmp_path, {"psu.fidl": fidl, "psu.fdepl": fdepl})
        try:
            build("psu.fdepl")
        except GenError as exc:
            text = str(exc)
            assert "\n" not in text and ": error: " in text, text
            errors += 1
    assert errors > 60        # the mutations do break things
