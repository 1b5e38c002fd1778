"""Mutated inputs: whatever the bytes, pbus-gen reports a GenError (one
line, exit 1) or succeeds; it never fails with another exception. A seeded,
deterministic mutation run over the demo files, the hardware-bound
deployment included (a quick stand-in for the fuzz target to come)."""

import random
import sys

import pytest

from pbustest.gen import ROOT, build, write
from pbusgen import cli, deep
from pbusgen.errors import GenError, Location

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


EVERYTHING = (ROOT / "tests" / "gen" / "fixtures" / "franca" / "everything.fidl").read_text()
LIB = (ROOT / "tests" / "gen" / "fixtures" / "franca" / "lib.fidl").read_text()
# ... and for the fixture that uses the whole grammar, its rarer words
ALPHABET_FRANCA = ALPHABET + ["->", "=>", "errorval", "errordef.", "on call", "state",
                              "initial", "vars", "PSM", "contract", "if", "else", ";",
                              "[", "]", "undefined", "maxInt", "0b1", "1.5d", "'"]


def test_mutations_of_the_whole_grammar_give_clean_errors(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(3456)
    errors = 0
    for _ in range(200):
        write(tmp_path, {"everything.fidl": mutate(EVERYTHING, rng, ALPHABET_FRANCA),
                         "lib.fidl": LIB})
        try:
            build("everything.fidl", interface="org.example.franca.Device")
        except GenError as exc:
            text = str(exc)
            assert "\n" not in text and "error: " in text, text
            errors += 1
    assert errors > 150


# --- deep but valid input (issue 16): loops where the input chains, room in
# deep.run's thread where it nests, one line where it nests deeper still ----

def _chain_file(decls, attribute="Int8"):
    return ("package p\ntypeCollection T {\n" + "\n".join(decls) +
            f"\n}}\ninterface I {{ attribute {attribute} a }}\n")


def _typedefs(n, forward):
    # forward: T0 names T1 ... (each declared before what it names)
    if forward:
        return [f"  typedef T{i} is T{i + 1}" for i in range(n - 1)] + \
            [f"  typedef T{n - 1} is Int32"]
    return ["  typedef T0 is Int32"] + [f"  typedef T{i} is T{i - 1}"
                                        for i in range(1, n)]


@pytest.mark.parametrize("forward", [True, False])
def test_1000_chained_typedefs(model_of, forward):
    last = "T.T0" if forward else "T.T999"
    model = model_of({"m.fidl": _chain_file(_typedefs(1000, forward), last)}, "m.fidl")
    assert model.parameters[0].type == "int32"


def test_500_terms_in_a_constant_expression(model_of):
    model = model_of({"m.fidl": _chain_file(
        ["  const Int32 N = " + " + ".join(["1"] * 500),
         "  const Int32 M = " + "(" * 500 + "2" + ")" * 500 + " - " +
         " - ".join(["1"] * 499)])}, "m.fidl")
    assert model.constants["p.T.N"].value == 500
    assert model.constants["p.T.M"].value == 2 - 499


@pytest.mark.parametrize("kind", ["struct", "enumeration", "union"])
def test_1000_chained_extends(model_of, kind):
    n = 1000
    member = {"struct": "Int8 f{i}", "union": "Int8 f{i}", "enumeration": "E{i}"}[kind]
    decls = [f"  {kind} X{i} extends X{i + 1} {{ {member.format(i=i)} }}"
             for i in range(n - 1)]
    decls.append(f"  {kind} X{n - 1} {{ {member.format(i=n - 1)} }}")
    model = model_of({"m.fidl": _chain_file(decls)}, "m.fidl")
    x0 = model.types["p.T.X0"]
    members = x0.enumerators if kind == "enumeration" else x0.fields
    assert len(members) == n and members[0].name.endswith(str(n - 1))
    if kind == "enumeration":
        assert [e.value for e in members] == list(range(n))


def test_1000_chained_interfaces(model_of):
    n = 1000
    text = "package p\n" + "".join(
        f"interface I{i} extends I{i + 1} {{ attribute Int8 a{i} }}\n"
        for i in range(n - 1)) + f"interface I{n - 1} {{ attribute Int8 a{n - 1} }}\n"
    model = model_of({"m.fidl": text}, "m.fidl", interface="p.I0")
    assert len(model.parameters) == n
    assert model.parameters[0].name == f"a{n - 1}" and model.parameters[-1].name == "a0"


def _nested_structs(n):
    decls = [f"  struct N{i} {{ N{i + 1} n }}" for i in range(n - 1)]
    return decls + [f"  struct N{n - 1} {{ Int32 x }}"]


def test_structs_nested_400_deep(model_of, error_of):
    init = "{ x: 7 }"
    for _ in range(399):
        init = "{ n: " + init + " }"
    model = model_of({"m.fidl": _chain_file(_nested_structs(400) +
                                            [f"  const N0 C = {init}"])}, "m.fidl")
    value = model.constants["p.T.C"].value
    for _ in range(399):
        value = value["n"]
    assert value == {"x": 7}
    # As an attribute, its one parameter has a name too long for the schema:
    # one line, not a crash.
    error = error_of({"m.fidl": _chain_file(_nested_structs(400), "T.N0")}, "m.fidl")
    assert error.startswith("m.fidl:402:23: error: parameter name 'a.n.n.n.") and \
        error.endswith("is 801 bytes long, above the limit of 127")


def test_deeper_than_the_stack_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"m.fidl": _chain_file(_nested_structs(10000))})
    assert cli.main(["--check", "m.fidl"]) == 1
    assert capsys.readouterr().err == \
        "m.fidl:3:10: error: type 'p.T.N0' is nested too deeply\n"


def test_deep_run_hands_back_results_errors_and_limits():
    assert deep.run(lambda a, b=0: a + b, 1, b=2) == 3
    with pytest.raises(GenError) as info:
        deep.run(lambda: (_ for _ in ()).throw(GenError(None, "x")))
    assert str(info.value) == "error: x"
    limit = sys.getrecursionlimit()

    def forever(n=0):
        if n == 0:
            deep.at(Location("f.fidl", 3, 4), "constant 'p.C'")
        return forever(n + 1) + 1
    with pytest.raises(GenError) as info:
        deep.run(forever)
    assert str(info.value) == "f.fidl:3:4: error: constant 'p.C' is nested too deeply"
    assert sys.getrecursionlimit() == limit
