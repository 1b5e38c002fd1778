"""The SCPI keys (ScpiKeyword, ScpiAccess, ScpiEnum): each class of bad
input with its exact one-line message, conflicts across the schema, the
tree file and the command reference byte-exact against golden files, and
docs/scpi-psu.md up to date with the demo's deployment."""

import pytest

from pbustest.gen import GOLDEN, ROOT, build, update_golden, write
from pbusgen import cli, scpi

FIDL = '''package p
interface I {
    enumeration Mode { AUTO MANUAL OVER_TEMPERATURE }
    enumeration Level { LOW HIGH = 7 }
    struct Pair { Double a  Double b }
    attribute Double v
    attribute Double w
    attribute Double m readonly
    attribute Double n noRead
    attribute Mode mode
    attribute UInt8[] arr
    attribute Boolean r1
    attribute Boolean r2
    attribute Pair pair
    method run { }
    method cal { in { Double ref  Level mode  Integer(-5, 5) k  ByteBuffer blob } out { Double gain }
                 error { OK BAD_REFERENCE } }
    method put { in { Pair p } }
    method get { out { Pair p } }
    method notify fireAndForget { in { String why } }
    method low { in { Mode m } }
}
'''


def depl(body: str) -> str:
    return 'import "i.fidl"\ndefine parambus.deployment for interface p.I {\n' \
        + body + "\n}\n"


@pytest.mark.parametrize("body, message", [
    ('attribute v { ScpiKeyword = "volt" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': \"volt\" has a node 'volt' that is not a "
     "SCPI mnemonic (its short form in upper case, the rest of its long form in lower "
     "case, then an optional numeric suffix or '#')"),
    ('attribute v { ScpiKeyword = "" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': \"\" is empty"),
    ('attribute v { ScpiKeyword = "VOLT::LEV" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': \"VOLT::LEV\" has a node '' that is not a "
     "SCPI mnemonic (its short form in upper case, the rest of its long form in lower "
     "case, then an optional numeric suffix or '#')"),
    ('attribute v { ScpiKeyword = "VOLT[LEV]" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': \"VOLT[LEV]\" is not a SCPI keyword at "
     "character 5: expected ':NODE' or '[:NODE]' (or '[NODE:]' first)"),
    ('attribute v { ScpiKeyword = "[:VOLTage]" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': \"[:VOLTage]\" is not a SCPI keyword at "
     "character 1: expected ':NODE' or '[:NODE]' (or '[NODE:]' first)"),
    ('attribute v { ScpiKeyword = "[SOURce:]" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': \"[SOURce:]\" has no node that is not "
     "optional"),
    ('attribute v { ScpiKeyword = "VOLTageLEVELABC" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': \"VOLTageLEVELABC\" has a node "
     "'VOLTageLEVELABC' that is not a SCPI mnemonic (its short form in upper case, the "
     "rest of its long form in lower case, then an optional numeric suffix or '#')"),
    ('attribute v { ScpiKeyword = "VOLTagelevelab" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': \"VOLTagelevelab\" has a node "
     "'VOLTagelevelab' of 14 letters, above the limit of 12"),
    ('attribute v { ScpiKeyword = "CHAN#" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': '#' addresses an array element, and "
     "'v' is of type double"),
    ('attribute arr { ScpiKeyword = "CHAN#:GAIN#" }',
     "d.fdepl:3:17: error: 'ScpiKeyword' of 'arr': \"CHAN#:GAIN#\" has more than one "
     "'#' suffix"),
    ('attribute v { ScpiKeyword = 3 }',
     "d.fdepl:3:29: error: 'ScpiKeyword' of 'v': found 3, expected a string in double "
     "quotes"),
    ('attribute v { ScpiKeyword = "VOLT" ScpiAccess = read }',
     "d.fdepl:3:49: error: 'ScpiAccess' of 'v': found read, expected one of query, set, "
     "both"),
    ('attribute v { ScpiKeyword = "MEAS?" ScpiAccess = both }',
     "d.fdepl:3:37: error: 'ScpiAccess' of 'v': both, but the keyword \"MEAS?\" ends in "
     "'?' (query only)"),
    ('attribute m { ScpiKeyword = "MEAS" ScpiAccess = set }',
     "d.fdepl:3:36: error: 'ScpiAccess' of 'm': set on a readonly attribute; only "
     "'query' applies"),
    ('attribute n { ScpiKeyword = "TRIG" ScpiAccess = both }',
     "d.fdepl:3:36: error: 'ScpiAccess' of 'n': both on a noRead attribute; only 'set' "
     "applies"),
    ('attribute v { ScpiAccess = query }',
     "d.fdepl:3:15: error: 'ScpiAccess' of 'v' needs 'ScpiKeyword' in the same section"),
    ('attribute v { ScpiKeyword = "VOLT" ScpiEnum = "A=B" }',
     "d.fdepl:3:36: error: 'ScpiEnum' does not apply to 'v' of type Double (only to "
     "enumeration attributes)"),
    ('attribute mode { ScpiKeyword = "MODE" }',
     "d.fdepl:3:18: error: enumerator 'OVER_TEMPERATURE' of 'mode': mnemonic "
     "'OVER_TEMPERATURE' (from its label) is not a SCPI mnemonic of at most 12 "
     "characters (upper-case short form, then lower case); give one with ScpiEnum = "
     "\"LABEL=MNEMonic\""),
    ('attribute mode { ScpiKeyword = "MODE" ScpiEnum = "OVER_TEMPERATURE" }',
     "d.fdepl:3:39: error: 'ScpiEnum' of 'mode': found 'OVER_TEMPERATURE', expected "
     "LABEL=MNEMonic"),
    ('attribute mode { ScpiKeyword = "MODE" ScpiEnum = "HOT=HOT" }',
     "d.fdepl:3:39: error: 'ScpiEnum' of 'mode': no enumerator 'HOT' in p.I.Mode"),
    ('attribute mode { ScpiKeyword = "MODE" ScpiEnum = "OVER_TEMPERATURE=AUTO" }',
     "d.fdepl:3:39: error: enumerator 'OVER_TEMPERATURE' of 'mode': mnemonic "
     "'AUTO' can be read as 'AUTO' (AUTO)"),
    ('attribute mode { ScpiKeyword = "MODE" ScpiEnum = "OVER_TEMPERATURE=MANual" }',
     "d.fdepl:3:39: error: enumerator 'OVER_TEMPERATURE' of 'mode': mnemonic "
     "'MANual' can be read as 'MANUAL' (MANUAL)"),
    ('attribute v { ScpiKeyWord = "VOLT" }',
     "d.fdepl:3:15: error: unknown SCPI key 'ScpiKeyWord' in attribute 'v'; did you mean "
     "'ScpiKeyword'?"),
    ('attribute pair { ScpiKeyword = "PAIR" }',
     "d.fdepl:3:18: error: 'ScpiKeyword' applies to the fields of struct 'pair'; put it "
     "in a 'field NAME { ... }' section"),
    ('attribute v { ScpiQuestionable = 13 }',
     "d.fdepl:3:34: error: 'ScpiQuestionable' of 'v': found 13, expected a status register "
     "bit: 0 to 12, or 14"),
    ('attribute v { ScpiOperation = true }',
     "d.fdepl:3:31: error: 'ScpiOperation' of 'v': found true, expected a status register "
     "bit: 0 to 12, or 14"),
    ('attribute v { ScpiQuestionable = 1 ScpiQuestionableLevel = bad }',
     "d.fdepl:3:60: error: 'ScpiQuestionableLevel' of 'v': found bad, expected one of "
     "minor, major, invalid"),
    ('attribute v { ScpiQuestionableLevel = major }',
     "d.fdepl:3:15: error: 'ScpiQuestionableLevel' of 'v' needs 'ScpiQuestionable' in "
     "the same section"),
    ('attribute v { ScpiOperation = 3 }',
     "d.fdepl:3:15: error: 'ScpiOperation' of 'v': the bit follows a Boolean, integer or "
     "enumeration value, and 'v' is of type double"),
    ('attribute arr { ScpiOperation = 3 }',
     "d.fdepl:3:17: error: 'ScpiOperation' of 'arr': the bit follows a Boolean, integer or "
     "enumeration value, and 'arr' is of type uint8[]"),
    ('attribute n { ScpiQuestionable = 2 }',
     "d.fdepl:3:15: error: 'ScpiQuestionable' of 'n': pbus-scpi follows the parameter "
     "through a subscription, and it is noRead"),
    ('attribute v { ScpiKeyword = "SYSTem:ERRor:COUNt" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': \"SYSTem:ERRor:COUNt\" matches the header "
     "'SYST:ERR:COUN' of pbus-scpi's own command 'SYSTem:ERRor:COUNt'"),
    ('attribute m { ScpiKeyword = "STATus:QUEStionable?" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'm': \"STATus:QUEStionable?\" matches the header "
     "'STAT:QUES' of pbus-scpi's own command 'STATus:QUEStionable[:EVENt]'"),
    ('attribute v { ScpiKeyword = "STATe" }',
     "d.fdepl:3:15: error: 'ScpiKeyword' of 'v': node 'STATe' has a form of node 'STATus' "
     "of pbus-scpi's own command 'STATus:PRESet'"),
])
def test_key_errors(error_of, body, message):
    assert error_of({"i.fidl": FIDL, "d.fdepl": depl(body)}, "d.fdepl") == message


@pytest.mark.parametrize("body, message", [
    # a short form meets a long form
    ('attribute v { ScpiKeyword = "VOLTage" }\nattribute w { ScpiKeyword = "VOLT" }',
     "d.fdepl:4:15: error: 'ScpiKeyword' of 'w': node 'VOLT' and node 'VOLTage' of 'v' "
     "(d.fdepl:3:15) are different mnemonics with the same form 'VOLT'"),
    # an optional node left out
    ('attribute v { ScpiKeyword = "SOURce:VOLTage[:LEVel]" }\n'
     'attribute w { ScpiKeyword = "SOURce:VOLTage" }',
     "d.fdepl:4:15: error: 'ScpiKeyword' of 'w': \"SOURce:VOLTage\" and "
     "\"SOURce:VOLTage[:LEVel]\" of 'v' (d.fdepl:3:15) both match the header 'SOUR:VOLT'"),
    # an optional first node
    ('attribute v { ScpiKeyword = "[SOURce:]VOLTage" }\n'
     'attribute w { ScpiKeyword = "VOLTage" }',
     "d.fdepl:4:15: error: 'ScpiKeyword' of 'w': \"VOLTage\" and \"[SOURce:]VOLTage\" of "
     "'v' (d.fdepl:3:15) both match the header 'VOLT'"),
    # no suffix is suffix 1
    ('attribute r1 { ScpiKeyword = "OUTPut" }\nattribute r2 { ScpiKeyword = "OUTPut1" }',
     "d.fdepl:4:16: error: 'ScpiKeyword' of 'r2': \"OUTPut1\" and \"OUTPut\" of 'r1' "
     "(d.fdepl:3:16) both match the header 'OUTP1'"),
    # `#` covers 1..MaxLength
    ('attribute arr { MaxLength = 4 ScpiKeyword = "CHANnel#" }\n'
     'attribute r1 { ScpiKeyword = "CHANnel3" }',
     "d.fdepl:4:16: error: 'ScpiKeyword' of 'r1': \"CHANnel3\" and \"CHANnel#\" of 'arr' "
     "(d.fdepl:3:31) both match the header 'CHAN3'"),
    # a query-only keyword against a both one
    ('attribute v { ScpiKeyword = "LEVel" }\nattribute m { ScpiKeyword = "LEVel?" }',
     "d.fdepl:4:15: error: 'ScpiKeyword' of 'm': \"LEVel?\" and \"LEVel\" of 'v' "
     "(d.fdepl:3:15) both match the header 'LEV'"),
    # two mnemonics at one place sharing a form
    ('attribute v { ScpiKeyword = "VOLT:A" }\nattribute w { ScpiKeyword = "VOLTage:B" }',
     "d.fdepl:4:15: error: 'ScpiKeyword' of 'w': node 'VOLTage' and node 'VOLT' of 'v' "
     "(d.fdepl:3:15) are different mnemonics with the same form 'VOLT'"),
])
def test_conflicts(error_of, body, message):
    assert error_of({"i.fidl": FIDL, "d.fdepl": depl(body)}, "d.fdepl") == message


def test_no_conflict(model_of):
    body = ('attribute arr { MaxLength = 2 ScpiKeyword = "CHANnel#" }\n'
            'attribute r1 { ScpiKeyword = "CHANnel3" }\n'       # beyond the array
            'attribute r2 { ScpiKeyword = "CHANnel3:STATe" }\n'  # longer header
            'attribute m { ScpiKeyword = "LEVel?" }\n'           # query only ...
            'attribute n { ScpiKeyword = "LEVel" }\n'            # ... and set only
            'attribute v { ScpiKeyword = "VOLTage" }\n'
            'attribute w { ScpiKeyword = "VOLTage:PROTection" }')
    model = model_of({"i.fidl": FIDL, "d.fdepl": depl(body)}, "d.fdepl")
    by_name = {p.name: p.scpi for p in model.parameters if p.scpi}
    assert by_name["m"].access == "query" and by_name["n"].access == "set"
    assert [n.text() for n in by_name["arr"].nodes] == ["CHANnel#"]
    assert by_name["arr"].element_suffix


def test_keys_warned_where_not_implemented(tmp_path, monkeypatch):
    """Scpi keys are still reserved in broadcast sections and the define."""
    monkeypatch.chdir(tmp_path)
    fidl = FIDL.replace("method run { }\n", "method run { }\n    broadcast b { }\n")
    write(tmp_path, {"i.fidl": fidl,
                     "d.fdepl": depl('broadcast b { ScpiKeyword = "RUN" }\nScpiFoo = 1')})
    model, diag = build("d.fdepl")
    assert [str(w) for w in diag.warnings] == [
        "d.fdepl:3:15: warning: key 'ScpiKeyword' belongs to the reserved namespace "
        "'Scpi' and is not implemented yet; ignored",
        "d.fdepl:4:1: warning: key 'ScpiFoo' belongs to the reserved namespace "
        "'Scpi' and is not implemented yet; ignored"]


def test_builtin_neighbours(model_of):
    """Keywords beside pbus-scpi's own commands are fine: another node under
    STATus, a query-only command on the header of a set-only one."""
    model_of({"i.fidl": FIDL, "d.fdepl": depl(
        'attribute v { ScpiKeyword = "STATus:VOLTage" }\n'
        'attribute m { ScpiKeyword = "SYSTem:ERRor:LAST?" }\n'
        'attribute w { ScpiKeyword = "STATus:PRESet:LEVel" }')}, "d.fdepl")


@pytest.mark.parametrize("body, message", [
    ('method put { ScpiKeyword = "PUT" }',
     "d.fdepl:3:14: error: 'ScpiKeyword' of method 'put': argument 'p' is of type "
     "p.I.Pair, which no SCPI value carries (only Boolean, integers, Float, Double, "
     "String, ByteBuffer and enumerations)"),
    ('method get { ScpiKeyword = "GET" }',
     "d.fdepl:3:14: error: 'ScpiKeyword' of method 'get': argument 'p' is of type "
     "p.I.Pair, which no SCPI value carries (only Boolean, integers, Float, Double, "
     "String, ByteBuffer and enumerations)"),
    ('method run { ScpiKeyword = "RUN" ScpiAccess = query }',
     "d.fdepl:3:34: error: 'ScpiAccess' of method 'run': query, but the method has no "
     "out-arguments to answer; use 'set'"),
    ('method notify { ScpiKeyword = "NOT?" }',
     "d.fdepl:3:17: error: 'ScpiAccess' of method 'notify': query, but the method is "
     "fireAndForget (no reply) to answer; use 'set'"),
    ('method cal { ScpiKeyword = "CAL?" ScpiAccess = set }',
     "d.fdepl:3:35: error: 'ScpiAccess' of method 'cal': set, but the keyword \"CAL?\" "
     "ends in '?' (query only)"),
    ('method cal { ScpiKeyword = "CAL" ScpiAccess = both }',
     "d.fdepl:3:47: error: 'ScpiAccess' of method 'cal': found both, expected one of "
     "set, query"),
    ('method run { ScpiKeyword = "RUN#" }',
     "d.fdepl:3:14: error: 'ScpiKeyword' of method 'run': '#' addresses an array "
     "element, and a method has none"),
    ('method run { ScpiAccess = set }',
     "d.fdepl:3:14: error: 'ScpiAccess' of method 'run' needs 'ScpiKeyword' in the "
     "same section"),
    ('method run { ScpiKeyWord = "RUN" }',
     "d.fdepl:3:14: error: unknown SCPI key 'ScpiKeyWord' in method 'run'; did you mean "
     "'ScpiKeyword'?"),
    ('method low { ScpiKeyword = "LOW" }',
     "d.fdepl:3:14: error: 'ScpiKeyword' of method 'low': enumerator 'OVER_TEMPERATURE' "
     "of argument 'm' (p.I.Mode): its mnemonic 'OVER_TEMPERATURE' (the label in upper "
     "case) is not a SCPI mnemonic of at most 12 characters"),
    # conflicts with parameters, both ways
    ('attribute v { ScpiKeyword = "RUN" }\nmethod run { ScpiKeyword = "RUN" }',
     "d.fdepl:4:14: error: 'ScpiKeyword' of method 'run': \"RUN\" and \"RUN\" of 'v' "
     "(d.fdepl:3:15) both match the header 'RUN'"),
    ('attribute v { ScpiKeyword = "CAL:A" }\nmethod run { ScpiKeyword = "CALibrate:B" }',
     "d.fdepl:4:14: error: 'ScpiKeyword' of method 'run': node 'CALibrate' and node "
     "'CAL' of 'v' (d.fdepl:3:15) are different mnemonics with the same form 'CAL'"),
    # conflicts with pbus-scpi's own commands (cal is a query, run a set)
    ('method cal { ScpiKeyword = "SYSTem:ERRor" }',
     "d.fdepl:3:14: error: 'ScpiKeyword' of method 'cal': \"SYSTem:ERRor\" matches the "
     "header 'SYST:ERR' of pbus-scpi's own command 'SYSTem:ERRor[:NEXT]'"),
    ('method run { ScpiKeyword = "STATus:PRESet" }',
     "d.fdepl:3:14: error: 'ScpiKeyword' of method 'run': \"STATus:PRESet\" matches the "
     "header 'STAT:PRES' of pbus-scpi's own command 'STATus:PRESet'"),
    ('method run { ScpiKeyword = "STATe:CLEar" }',
     "d.fdepl:3:14: error: 'ScpiKeyword' of method 'run': node 'STATe' has a form of node "
     "'STATus' of pbus-scpi's own command 'STATus:PRESet'"),
])
def test_method_key_errors(error_of, body, message):
    assert error_of({"i.fidl": FIDL, "d.fdepl": depl(body)}, "d.fdepl") == message


def test_method_records(tmp_path):
    """A method's command: its access by default, its arguments typed, its
    error enumeration, its headers; a query-only parameter and a set-only
    method may share a header."""
    body = ('attribute m { ScpiKeyword = "RUN?" }\n'
            'method run { ScpiKeyword = "RUN" }\n'
            'method cal { ScpiKeyword = "[SYSTem:]CALibrate" }')
    (tmp_path / "i.fidl").write_text(FIDL)
    (tmp_path / "d.fdepl").write_text(depl(body))
    tree, ref = tmp_path / "t.scpi", tmp_path / "t.md"
    assert cli.main(["--scpi", str(tree), "--scpi-reference", str(ref),
                     str(tmp_path / "d.fdepl")]) == 0
    lines = tree.read_text().splitlines()
    start = lines.index("method 0 run set")
    assert lines[start:] == [
        "method 0 run set", "header 0 RUN",
        "method 1 cal query",
        "in 1 ref double", "in 1 mode enum", "enum 1 0 LOW", "enum 1 7 HIGH",
        "in 1 k integer:-5:5", "in 1 blob bytes",
        "out 1 gain double", "error 1 0 OK", "error 1 1 BAD_REFERENCE",
        "header 1 SYSTem:CALibrate", "header 1 CALibrate"]
    text = ref.read_text()
    assert "| `[SYSTem:]CALibrate` | query (method) | `<number>,LOW\\|HIGH,<integer>,<block>` " \
           "| |" in text
    assert "- Forms: `[SYSTem:]CALibrate? <number>,LOW|HIGH,<integer>,<block>`" in text
    assert "- Errors: `BAD_REFERENCE` queue -200" in text


def test_status_records(tmp_path):
    """`ScpiQuestionable`/`ScpiOperation` become the tree's `status` lines, on
    parameters with or without a keyword, and the reference lists them."""
    body = ('attribute v { ScpiQuestionable = 0 }\n'
            'attribute w { ScpiKeyword = "W" ScpiQuestionable = 0 ScpiQuestionableLevel = major }\n'
            'attribute mode { ScpiOperation = 14 }\n'
            'attribute r1 { ScpiOperation = 8 ScpiQuestionable = 9 '
            'ScpiQuestionableLevel = invalid }')
    (tmp_path / "i.fidl").write_text(FIDL)
    (tmp_path / "d.fdepl").write_text(depl(body))
    tree, ref = tmp_path / "t.scpi", tmp_path / "t.md"
    assert cli.main(["--scpi", str(tree), "--scpi-reference", str(ref),
                     str(tmp_path / "d.fdepl")]) == 0
    status = [ln for ln in tree.read_text().splitlines() if ln.startswith("status ")]
    assert status == ["status questionable 0 0 minor", "status questionable 0 1 major",
                      "status operation 14 4 nonzero", "status questionable 9 6 invalid",
                      "status operation 8 6 nonzero"]
    text = ref.read_text()
    assert "| QUEStionable | 9 (512) | `r1` | the alarm status is invalid |" in text
    assert "| OPERation | 14 (16384) | `mode` | the value is not zero (ON) |" in text


def test_defaults_and_forms(model_of):
    body = ('attribute v { ScpiKeyword = "[SOURce:]VOLTage[:LEVel]" }\n'
            'attribute m { ScpiKeyword = "MEASure?" }\n'
            'attribute n { ScpiKeyword = "TRIGger" }\n'
            'attribute mode { ScpiKeyword = "MODE" ScpiEnum = "OVER_TEMPERATURE=OTEMp" }')
    model = model_of({"i.fidl": FIDL, "d.fdepl": depl(body)}, "d.fdepl")
    cmds = {p.name: p.scpi for p in model.parameters if p.scpi}
    assert [":".join(n.text() for n in path) for path in cmds["v"].paths()] == [
        "SOURce:VOLTage:LEVel", "VOLTage:LEVel", "SOURce:VOLTage", "VOLTage"]
    assert (cmds["v"].access, cmds["m"].access, cmds["n"].access) == ("both", "query", "set")
    assert cmds["mode"].mnemonics == [(0, "AUTO"), (1, "MANUAL"), (2, "OTEMp")]


def test_suffix_units():
    assert scpi._suffix_unit("V") == ("V", "1")
    assert scpi._suffix_unit("mA") == ("A", "1e-3")
    assert scpi._suffix_unit("kHz") == ("HZ", "1e3")
    assert scpi._suffix_unit("degC") == ("CEL", "1")
    assert scpi._suffix_unit("rpm") == (None, "1")


CASES = {
    "psu": "examples/psu/psu.fdepl",
    "scpi-fixture": "tests/scpi/fixture.fdepl",
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("ext, option", [("scpi", "--scpi"), ("md", "--scpi-reference")])
def test_golden(tmp_path, name, ext, option):
    out = tmp_path / f"{name}.{ext}"
    assert cli.main([option, str(out), str(ROOT / CASES[name])]) == 0
    golden = GOLDEN / "scpi" / f"{name}.{ext}"
    if update_golden():
        golden.parent.mkdir(exist_ok=True)
        golden.write_bytes(out.read_bytes())
    assert golden.exists(), f"{golden} missing: run with UPDATE_GOLDEN=1"
    assert out.read_bytes() == golden.read_bytes(), f"{name}.{ext} differs from {golden}"


def test_psu_reference_is_up_to_date(tmp_path):
    """docs/scpi-psu.md is what pbus-gen makes of the demo's deployment;
    regenerate it with `pbus-gen --scpi-reference docs/scpi-psu.md
    examples/psu/psu.fdepl` (run from the repository root)."""
    out = tmp_path / "scpi-psu.md"
    assert cli.main(["--scpi-reference", str(out), str(ROOT / "examples/psu/psu.fdepl")]) == 0
    doc = ROOT / "docs" / "scpi-psu.md"
    assert doc.read_text() == out.read_text(), \
        "docs/scpi-psu.md is out of date: regenerate it (see this test's docstring)"
