"""Hardware bindings (`Hw...` deployment keys, docs/deployment-spec.md):
what each binding kind compiles to (whole `param` records, defaults filled
in, in the order of docs/schema-format.md) and one test per class of bad
input, with the exact one-line message and its file, line and column."""

import pytest

from pbustest.gen import ROOT, build, write
from pbusgen import emit_schema

DEV = '''package p
interface Dev {
    enumeration State { OFF ON }
    struct Pair { Double a  Double b }
    attribute Boolean relay
    attribute Boolean door readonly
    attribute UInt32 pulses readonly
    attribute Int16 raw readonly
    attribute Integer(0, 100) level readonly
    <** @description: Output voltage. **>
    attribute Double volts readonly
    attribute Float duty
    attribute UInt16 duty_ns
    attribute Double vset
    attribute Int64 count readonly
    attribute String name readonly
    attribute ByteBuffer blob readonly
    attribute State state
    attribute Boolean[] flags readonly
    attribute Pair pair
    method run { }
    broadcast done { }
}
'''


def depl(body: str) -> str:
    """The deployment of p.Dev with `body`; the body starts on line 3."""
    return 'import "dev.fidl"\ndefine parambus.deployment for interface p.Dev {\n' \
        + body + "\n}\n"


@pytest.fixture
def compiled(model_of):
    """compiled(body, name) -> the `param` record of parameter `name`."""
    def run(body: str, name: str) -> str:
        model = model_of({"dev.fidl": DEV, "dev.fdepl": depl(body)}, "dev.fdepl")
        lines = [line for line in emit_schema.render(model).splitlines()
                 if line.startswith(f"param {name} ")]
        assert len(lines) == 1
        return lines[0]
    return run


@pytest.fixture
def error(error_of):
    """error(body) -> the error for the deployment `body`, without 'dev.fdepl:'."""
    def run(body: str) -> str:
        message = error_of({"dev.fidl": DEV, "dev.fdepl": depl(body)}, "dev.fdepl")
        assert message.startswith("dev.fdepl:"), message
        return message[len("dev.fdepl:"):]
    return run


# --- what each kind compiles to ---------------------------------------------

def test_gpio_output_defaults(compiled):
    assert compiled('attribute relay { HwBinding = gpio_output HwDevice = "pbus-sim0" '
                    'HwLine = "A0" }', "relay") == (
        "param relay bool class=setting hw=gpio-output hw-device=pbus-sim0 hw-line=A0 "
        "hw-active-low=false hw-bias=as-is hw-drive=push-pull")


def test_gpio_output_every_key(compiled):
    assert compiled('attribute relay { HwBinding = gpio_output HwDevice = "/dev/gpiochip1" '
                    'HwLine = 17 HwActiveLow = true HwBias = pull_down '
                    'HwDrive = open_drain Default = true }', "relay") == (
        "param relay bool default=true class=setting hw=gpio-output "
        "hw-device=/dev/gpiochip1 hw-line-offset=17 hw-active-low=true "
        "hw-bias=pull-down hw-drive=open-drain")


@pytest.mark.parametrize("written, shown", [
    ("open_source", "open-source"), ("push_pull", "push-pull")])
def test_gpio_output_drives(compiled, written, shown):
    assert compiled('attribute relay { HwBinding = gpio_output HwDevice = "c" '
                    f'HwLine = 0 HwDrive = {written} }}', "relay").endswith(
        f" hw-line-offset=0 hw-active-low=false hw-bias=as-is hw-drive={shown}")


def test_gpio_input_boolean_defaults(compiled):
    assert compiled('attribute door { HwBinding = gpio_input HwDevice = "pbus-sim0" '
                    'HwLine = "A1" }', "door") == (
        "param door bool flags=readonly class=setting hw=gpio-input hw-device=pbus-sim0 "
        "hw-line=A1 hw-active-low=false hw-bias=as-is hw-edges=both hw-debounce-us=0")


def test_gpio_input_counter_every_key(compiled):
    assert compiled('attribute pulses { UpdateClass = live HwBinding = gpio_input '
                    'HwDevice = "gpiochip0" HwLine = 4095 HwActiveLow = true '
                    'HwBias = pull_up HwEdges = falling HwDebounceUs = 1000000 }',
                    "pulses") == (
        "param pulses uint32 flags=readonly class=live "
        "hw=gpio-input hw-device=gpiochip0 hw-line-offset=4095 hw-active-low=true "
        "hw-bias=pull-up hw-edges=falling hw-debounce-us=1000000")


def test_gpio_bias_disabled_and_edges_rising(compiled):
    assert compiled('attribute door { HwBinding = gpio_input HwDevice = "c" HwLine = 1 '
                    'HwBias = disabled HwEdges = rising }', "door").endswith(
        " hw-bias=disabled hw-edges=rising hw-debounce-us=0")


def test_i2c_register_defaults(compiled):
    assert compiled('attribute raw { HwBinding = i2c_register HwDevice = "/dev/i2c-1" '
                    'HwAddress = 0x48 HwRegister = 0x10 }', "raw") == (
        "param raw int16 flags=readonly class=setting "
        "hw=i2c-register hw-device=/dev/i2c-1 hw-address=72 hw-register=16 hw-width=8 "
        "hw-byte-order=big hw-signed=false hw-rate-hz=10 hw-scale=1 hw-offset=0")


def test_i2c_register_every_key_after_desc(compiled):
    """A 10-bit address, and numbers in their shortest round-trip form."""
    assert compiled('attribute volts { Unit = "V" UpdateClass = live '
                    'HwBinding = i2c_register HwDevice = "pbus-mock-i2c" '
                    'HwAddress = 0x2a5 HwRegister = 255 HwWidth = 32 '
                    'HwByteOrder = little HwSigned = true HwRateHz = 0.5 '
                    'HwScale = 0.0625 HwOffset = -40 }', "volts") == (
        "param volts double unit=V flags=readonly class=live desc=Output%20voltage. "
        "hw=i2c-register hw-device=pbus-mock-i2c hw-address=677 hw-register=255 "
        "hw-width=32 hw-byte-order=little hw-signed=true hw-rate-hz=0.5 "
        "hw-scale=0.0625 hw-offset=-40")


@pytest.mark.parametrize("written, shown", [
    ("1e-5", "1e-05"), ("0.1", "0.1"), ("1000", "1000"), ("2.0", "2"),
    ("-0.001", "-0.001"), ("1e20", "1e+20"), ("3", "3")])
def test_numbers_round_trip(compiled, written, shown):
    assert compiled('attribute raw { HwBinding = i2c_register HwDevice = "d" '
                    f'HwAddress = 0 HwRegister = 0 HwScale = {written} '
                    f'HwOffset = {written} }}', "raw").endswith(
        f" hw-scale={shown} hw-offset={shown}")
    assert float(shown) == float(written)


def test_i2c_register_on_integer_and_unsigned_types(compiled):
    assert " hw=i2c-register " in compiled(
        'attribute level { HwBinding = i2c_register HwDevice = "d" HwAddress = 1 '
        'HwRegister = 2 }', "level")
    assert " hw=i2c-register " in compiled(
        'attribute pulses { HwBinding = i2c_register HwDevice = "d" HwAddress = 1 '
        'HwRegister = 2 HwWidth = 16 }', "pulses")


def test_pwm_duty_defaults(compiled):
    assert compiled('attribute duty { HwBinding = pwm_duty HwDevice = "pwmchip0" '
                    'HwPeriodNs = 40000 }', "duty") == (
        "param duty float class=setting hw=pwm-duty hw-device=pwmchip0 hw-channel=0 "
        "hw-period-ns=40000 hw-polarity=normal hw-scale=1 hw-offset=0")


def test_pwm_duty_every_key(compiled):
    assert compiled('attribute duty_ns { HwBinding = pwm_duty '
                    'HwDevice = "/sys/class/pwm/pwmchip2" HwChannel = 1023 '
                    'HwPeriodNs = 1000000000000 HwPolarity = inversed HwScale = -2.5 '
                    'HwOffset = 100 }', "duty_ns") == (
        "param duty_ns uint16 class=setting hw=pwm-duty "
        "hw-device=/sys/class/pwm/pwmchip2 hw-channel=1023 hw-period-ns=1000000000000 "
        "hw-polarity=inversed hw-scale=-2.5 hw-offset=100")


def test_text_is_percent_encoded(compiled):
    assert compiled('attribute relay { HwBinding = gpio_output HwDevice = "my chip,1" '
                    'HwLine = "LED=1%" }', "relay").split(" ")[5:7] == [
        "hw-device=my%20chip%2C1", "hw-line=LED%3D1%25"]


def test_binding_on_a_struct_field(compiled):
    assert compiled('attribute pair { Persistent = true\n'
                    '  field a { HwBinding = pwm_duty HwDevice = "pwmchip0" '
                    'HwPeriodNs = 1000 } }', "pair.a") == (
        "param pair.a double flags=persistent class=setting hw=pwm-duty "
        "hw-device=pwmchip0 hw-channel=0 hw-period-ns=1000 hw-polarity=normal "
        "hw-scale=1 hw-offset=0")


def test_model_holds_the_binding(model_of):
    model = model_of({"dev.fidl": DEV, "dev.fdepl": depl(
        'attribute relay {\n  HwBinding = gpio_output\n  HwDevice = "c"\n'
        '  HwLine = "A0"\n}')}, "dev.fdepl")
    relay, door = model.parameters[0], model.parameters[1]
    assert door.hw is None
    b = relay.hw
    assert (b.kind, b.device, b.line, b.active_low, b.bias, b.drive) == (
        "gpio_output", "c", "A0", False, "as_is", "push_pull")
    assert (b.edges, b.address, b.scale) == (None, None, None)
    assert str(b.loc) == "dev.fdepl:4:3"
    assert str(relay.origins["HwLine"]) == "dev.fdepl:6:3"


def test_unbound_parameters_have_no_hw_keys(compiled):
    assert compiled('attribute vset { Unit = "V" }', "vset") == \
        "param vset double unit=V class=setting"


def test_i2c_bindings_may_share_a_device(model_of):
    model = model_of({"dev.fidl": DEV, "dev.fdepl": depl(
        'attribute raw { HwBinding = i2c_register HwDevice = "d" HwAddress = 0x48 '
        'HwRegister = 0 }\n'
        'attribute volts { HwBinding = i2c_register HwDevice = "d" HwAddress = 0x48 '
        'HwRegister = 0 }')}, "dev.fdepl")
    assert [p.name for p in model.parameters if p.hw] == ["raw", "volts"]


def test_distinct_lines_and_channels_are_fine(model_of):
    model = model_of({"dev.fidl": DEV, "dev.fdepl": depl(
        # same name on another chip; a name and an offset are not compared
        'attribute relay { HwBinding = gpio_output HwDevice = "c0" HwLine = "A0" }\n'
        'attribute door { HwBinding = gpio_input HwDevice = "c1" HwLine = "A0" }\n'
        'attribute pulses { HwBinding = gpio_input HwDevice = "c0" HwLine = 0 }\n'
        'attribute duty { HwBinding = pwm_duty HwDevice = "p" HwPeriodNs = 10 }\n'
        'attribute duty_ns { HwBinding = pwm_duty HwDevice = "p" HwPeriodNs = 10 '
        'HwChannel = 1 }\n'
        'attribute vset { HwBinding = pwm_duty HwDevice = "q" HwPeriodNs = 10 }')},
        "dev.fdepl")
    assert len([p for p in model.parameters if p.hw]) == 6


# --- which keys exist, and where --------------------------------------------

@pytest.mark.parametrize("body, message", [
    ('attribute relay { HwAdress = 3 }',
     "3:19: error: unknown hardware binding key 'HwAdress' in attribute 'relay'; "
     "did you mean 'HwAddress'?"),
    ('attribute relay { HwI2cRegister = 3 }',
     "3:19: error: unknown hardware binding key 'HwI2cRegister' in attribute 'relay'; "
     "did you mean 'HwRegister'?"),
    ('attribute relay { HwBinding = gpio_output HwDevice = "c" HwLine = 0 '
     'HwActivelow = true }',
     "3:69: error: unknown hardware binding key 'HwActivelow' in attribute 'relay'; "
     "did you mean 'HwActiveLow'?"),
    ('attribute pair { field a { HwPeriod = 3 } }',
     "3:28: error: unknown hardware binding key 'HwPeriod' in field 'a' of attribute "
     "'pair'; did you mean 'HwPeriodNs'?"),
    ('method run { HwBindng = gpio_output }',
     "3:14: error: unknown hardware binding key 'HwBindng' in method 'run'; did you "
     "mean 'HwBinding'?"),
    ('attribute relay { HwXyz = 3 }',
     "3:19: error: unknown hardware binding key 'HwXyz' in attribute 'relay', expected "
     "one of HwBinding, HwDevice, HwLine, HwActiveLow, HwBias, HwDrive, HwEdges, "
     "HwDebounceUs, HwAddress, HwRegister, HwWidth, HwByteOrder, HwSigned, HwRateHz, "
     "HwChannel, HwPeriodNs, HwPolarity, HwScale, HwOffset"),
])
def test_unknown_hw_key(error, body, message):
    assert error(body) == message


def test_namespace_needs_an_upper_case_letter(error):
    """`Hw` alone is in the namespace; `Hwx` is an ordinary unknown key."""
    assert error('attribute relay { Hw = 1 }').startswith(
        "3:19: error: unknown hardware binding key 'Hw' in attribute 'relay', "
        "expected one of HwBinding, ")
    assert error('attribute relay { Hwline = 1 }').startswith(
        "3:19: error: unknown key 'Hwline' in attribute 'relay', expected one of Unit, ")


@pytest.mark.parametrize("body, message", [
    ('method run { HwDevice = "c" }',
     "3:14: error: 'HwDevice' does not apply to method 'run': hardware bindings "
     "belong to attributes and their fields"),
    ('broadcast done { HwBinding = gpio_output }',
     "3:18: error: 'HwBinding' does not apply to broadcast 'done': hardware bindings "
     "belong to attributes and their fields"),
    ('HwBinding = gpio_output',
     "3:1: error: 'HwBinding' does not apply to interface 'p.Dev': hardware bindings "
     "belong to attributes and their fields"),
    ('attribute pair { HwBinding = pwm_duty HwDevice = "p" HwPeriodNs = 10 }',
     "3:18: error: 'HwBinding' applies to the fields of struct 'pair'; put it in a "
     "'field NAME { ... }' section"),
    ('attribute pair { HwDevice = "p" field a { } }',
     "3:18: error: 'HwDevice' applies to the fields of struct 'pair'; put it in a "
     "'field NAME { ... }' section"),
])
def test_hw_key_in_the_wrong_place(error, body, message):
    assert error(body) == message


def test_other_reserved_namespaces_still_only_warn(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"dev.fidl": DEV, "dev.fdepl": depl(
        'attribute relay { HwBinding = gpio_output ScpiKeyword = "OUTP" '
        'HwDevice = "c" HwLine = 0 }\nmethod run { FleetTopic = "run" }')})
    model, diag = build("dev.fdepl")
    assert [str(w) for w in diag.warnings] == [
        "dev.fdepl:4:14: warning: key 'FleetTopic' belongs to the reserved namespace "
        "'Fleet' and is not implemented yet; ignored"]
    assert model.parameters[0].hw.kind == "gpio_output"


# --- the keys of each kind ----------------------------------------------------

@pytest.mark.parametrize("body, message", [
    ('attribute relay { HwDevice = "c" HwLine = "A0" }',
     "3:19: error: 'HwDevice' of 'relay' needs 'HwBinding' in the same section "
     "(gpio_output, gpio_input, i2c_register, pwm_duty)"),
    ('attribute relay { HwLine = "A0" HwDevice = "c" }',
     "3:19: error: 'HwLine' of 'relay' needs 'HwBinding' in the same section "
     "(gpio_output, gpio_input, i2c_register, pwm_duty)"),
    ('attribute pair { field a { HwPeriodNs = 10 } }',
     "3:28: error: 'HwPeriodNs' of 'pair.a' needs 'HwBinding' in the same section "
     "(gpio_output, gpio_input, i2c_register, pwm_duty)"),
])
def test_key_without_binding(error, body, message):
    assert error(body) == message


GPIO_OUT = 'attribute relay { HwBinding = gpio_output HwDevice = "c" HwLine = 0 '
GPIO_IN = 'attribute door { HwBinding = gpio_input HwDevice = "c" HwLine = 0 '
I2C = 'attribute raw { HwBinding = i2c_register HwDevice = "d" HwAddress = 1 HwRegister = 2 '
PWM = 'attribute duty { HwBinding = pwm_duty HwDevice = "p" HwPeriodNs = 10 '


@pytest.mark.parametrize("prefix, key, message", [
    (GPIO_OUT, "HwAddress = 0x48", "'HwAddress' does not apply to a gpio_output binding "
     "(only to i2c_register)"),
    (GPIO_OUT, "HwEdges = both", "'HwEdges' does not apply to a gpio_output binding "
     "(only to gpio_input)"),
    (GPIO_OUT, "HwScale = 2", "'HwScale' does not apply to a gpio_output binding (only "
     "to i2c_register and pwm_duty)"),
    (GPIO_IN, "HwDrive = open_drain", "'HwDrive' does not apply to a gpio_input binding "
     "(only to gpio_output)"),
    (GPIO_IN, "HwChannel = 1", "'HwChannel' does not apply to a gpio_input binding "
     "(only to pwm_duty)"),
    (I2C, "HwLine = 3", "'HwLine' does not apply to an i2c_register binding (only to "
     "gpio_output and gpio_input)"),
    (I2C, "HwPolarity = normal", "'HwPolarity' does not apply to an i2c_register "
     "binding (only to pwm_duty)"),
    (PWM, "HwActiveLow = true", "'HwActiveLow' does not apply to a pwm_duty binding "
     "(only to gpio_output and gpio_input)"),
    (PWM, "HwRateHz = 5", "'HwRateHz' does not apply to a pwm_duty binding (only to "
     "i2c_register)"),
])
def test_key_of_another_kind(error, prefix, key, message):
    assert error(f"{prefix}{key} }}") == f"3:{len(prefix) + 1}: error: {message}"


@pytest.mark.parametrize("body, message", [
    ('attribute relay { HwBinding = gpio_output HwDevice = "c" }',
     "3:19: error: 'HwBinding' of 'relay': a gpio_output binding needs 'HwLine'"),
    ('attribute relay { HwLine = 0 HwBinding = gpio_output }',
     "3:30: error: 'HwBinding' of 'relay': a gpio_output binding needs 'HwDevice'"),
    ('attribute door { HwBinding = gpio_input }',
     "3:18: error: 'HwBinding' of 'door': a gpio_input binding needs 'HwDevice' and "
     "'HwLine'"),
    ('attribute raw { HwBinding = i2c_register HwDevice = "d" }',
     "3:17: error: 'HwBinding' of 'raw': an i2c_register binding needs 'HwAddress' "
     "and 'HwRegister'"),
    ('attribute raw { HwBinding = i2c_register HwDevice = "d" HwRegister = 0 }',
     "3:17: error: 'HwBinding' of 'raw': an i2c_register binding needs 'HwAddress'"),
    ('attribute duty { HwBinding = pwm_duty }',
     "3:18: error: 'HwBinding' of 'duty': a pwm_duty binding needs 'HwDevice' and "
     "'HwPeriodNs'"),
])
def test_missing_required_key(error, body, message):
    assert error(body) == message


# --- values --------------------------------------------------------------------

def _value_case(prefix, key, value, expected):
    """(body, message) for `key = value` appended to a binding of `prefix`."""
    col = len(prefix) + len(key) + 4
    return (f"{prefix}{key} = {value} }}",
            f"3:{col}: error: '{key}' of '{prefix.split()[1]}': found {value}, "
            f"expected {expected}")


LINE = "a line name in double quotes or a line offset from 0 to 4095"


@pytest.mark.parametrize("body, message", [
    _value_case(GPIO_OUT.replace("HwLine = 0 ", ""), "HwLine", "-1", LINE),
    _value_case(GPIO_OUT.replace("HwLine = 0 ", ""), "HwLine", "4096", LINE),
    _value_case(GPIO_OUT.replace("HwLine = 0 ", ""), "HwLine", "1.5", LINE),
    _value_case(GPIO_OUT.replace("HwLine = 0 ", ""), "HwLine", "A0", LINE),
    _value_case(GPIO_IN, "HwDebounceUs", "-1", "an integer from 0 to 1000000"),
    _value_case(GPIO_IN, "HwDebounceUs", "1000001", "an integer from 0 to 1000000"),
    _value_case(GPIO_IN, "HwDebounceUs", "2.5", "an integer from 0 to 1000000"),
    _value_case(I2C.replace("HwAddress = 1 ", ""), "HwAddress", "1024",
                "an integer from 0 to 1023"),
    _value_case(I2C.replace("HwAddress = 1 ", ""), "HwAddress", "-1",
                "an integer from 0 to 1023"),
    _value_case(I2C.replace("HwRegister = 2 ", ""), "HwRegister", "256",
                "an integer from 0 to 255"),
    _value_case(I2C.replace("HwRegister = 2 ", ""), "HwRegister", "-1",
                "an integer from 0 to 255"),
    _value_case(I2C, "HwWidth", "24", "8, 16 or 32 (bits)"),
    _value_case(I2C, "HwWidth", "0", "8, 16 or 32 (bits)"),
    _value_case(I2C, "HwWidth", "16.0", "8, 16 or 32 (bits)"),
    _value_case(I2C, "HwRateHz", "0", "a number above 0 and at most 1000"),
    _value_case(I2C, "HwRateHz", "-1", "a number above 0 and at most 1000"),
    _value_case(I2C, "HwRateHz", "1000.5", "a number above 0 and at most 1000"),
    _value_case(I2C, "HwScale", "0", "a non-zero number"),
    _value_case(I2C, "HwScale", "0.0", "a non-zero number"),
    _value_case(I2C, "HwScale", "inf", "a non-zero number"),
    _value_case(I2C, "HwOffset", '"1"', "a number"),
    _value_case(PWM, "HwChannel", "1024", "an integer from 0 to 1023"),
    _value_case(PWM, "HwChannel", "-1", "an integer from 0 to 1023"),
    _value_case(PWM.replace("HwPeriodNs = 10 ", ""), "HwPeriodNs", "0",
                "an integer from 1 to 1000000000000"),
    _value_case(PWM.replace("HwPeriodNs = 10 ", ""), "HwPeriodNs", "1000000000001",
                "an integer from 1 to 1000000000000"),
    _value_case(PWM, "HwScale", "-0.0", "a non-zero number"),
])
def test_numbers_out_of_range(error, body, message):
    assert error(body) == message


def test_number_beyond_a_double(error):
    assert error(I2C + "HwOffset = 1e400 }") == (
        f"3:{len(I2C) + 12}: error: 'HwOffset' of 'raw': found inf, expected a number")
    assert error(PWM + "HwScale = 1" + "0" * 400 + " }").startswith(
        f"3:{len(PWM) + 11}: error: 'HwScale' of 'duty': found 10000")


def test_line_offset_bounds_are_inclusive(compiled):
    assert " hw-line-offset=0 " in compiled(GPIO_OUT + "}", "relay")
    assert compiled(GPIO_IN.replace("HwLine = 0", "HwLine = 4095") + "}", "door")


KINDS = "gpio_output, gpio_input, i2c_register, pwm_duty"


@pytest.mark.parametrize("prefix, key, value, expected", [
    (GPIO_OUT, "HwBias", "pullup", "one of as_is, disabled, pull_up, pull_down"),
    (GPIO_OUT, "HwBias", '"pull_up"', "one of as_is, disabled, pull_up, pull_down"),
    (GPIO_OUT, "HwDrive", "1", "one of push_pull, open_drain, open_source"),
    (GPIO_IN, "HwEdges", "none", "one of both, rising, falling"),
    (I2C, "HwByteOrder", '"big"', "one of big, little"),
    (PWM, "HwPolarity", "inverted", "one of normal, inversed"),
    ("attribute relay { ", "HwBinding", '"gpio_output"', "one of " + KINDS),
    ("attribute relay { ", "HwBinding", "spi_register", "one of " + KINDS),
    ("attribute relay { ", "HwBinding", "gpio", "one of " + KINDS),
    (GPIO_OUT, "HwActiveLow", "1", "true or false"),
    (I2C, "HwSigned", "yes", "true or false"),
])
def test_choices_and_booleans(error, prefix, key, value, expected):
    body, message = _value_case(prefix, key, value, expected)
    assert error(body) == message


@pytest.mark.parametrize("value, message", [
    ('""', "the device name is empty"),
    ('"' + "d" * 256 + '"', "the device name is 256 bytes long, above the limit of 255"),
    ('"' + "\u00e9" * 128 + '"', "the device name is 256 bytes long, above the limit "
     "of 255"),
    ('"a\\tb"', "the device name \"a\\tb\" contains a control character"),
    ('"a\\u0000"', "the device name \"a\\x00\" contains a control character"),
    ('"a\\u0085"', "the device name \"a\\x85\" contains a control character"),
    ("gpiochip0", "found gpiochip0, expected a string in double quotes"),
    ("0", "found 0, expected a string in double quotes"),
])
def test_device_name(error, value, message):
    prefix = 'attribute relay { HwBinding = gpio_output HwDevice = '
    assert error(f'{prefix}{value} HwLine = 0 }}') == (
        f"3:{len(prefix) + 1}: error: 'HwDevice' of 'relay': {message}")


def test_device_name_limit_is_inclusive(compiled):
    name = "d" * 255
    assert f" hw-device={name} " in compiled(
        f'attribute relay {{ HwBinding = gpio_output HwDevice = "{name}" HwLine = 0 }}',
        "relay")


@pytest.mark.parametrize("value, message", [
    ('""', "the line name is empty"),
    ('"' + "L" * 32 + '"', "the line name is 32 bytes long, above the limit of 31"),
    ('"A\\n0"', "the line name \"A\\n0\" contains a control character"),
])
def test_line_name(error, value, message):
    prefix = 'attribute relay { HwBinding = gpio_output HwDevice = "c" HwLine = '
    assert error(f"{prefix}{value} }}") == (
        f"3:{len(prefix) + 1}: error: 'HwLine' of 'relay': {message}")


def test_line_name_limit_is_inclusive(compiled):
    assert " hw-line=" + "L" * 31 + " " in compiled(
        'attribute relay { HwBinding = gpio_output HwDevice = "c" HwLine = "' + "L" * 31
        + '" }', "relay")


# --- type rules (reported at the HwBinding key) --------------------------------

def _binding(attr: str, kind: str) -> str:
    keys = {"gpio_output": 'HwDevice = "c" HwLine = 0',
            "gpio_input": 'HwDevice = "c" HwLine = 0',
            "i2c_register": 'HwDevice = "d" HwAddress = 1 HwRegister = 2',
            "pwm_duty": 'HwDevice = "p" HwPeriodNs = 10'}[kind]
    return f"attribute {attr} {{ HwBinding = {kind} {keys} }}"


@pytest.mark.parametrize("attr, kind, message", [
    ("vset", "gpio_output", "a gpio_output binding needs a Boolean attribute; 'vset' "
     "is of type Double"),
    ("duty_ns", "gpio_output", "a gpio_output binding needs a Boolean attribute; "
     "'duty_ns' is of type UInt16"),
    ("door", "gpio_output", "a gpio_output binding needs a writable attribute (it "
     "drives the line from the parameter); 'door' is readonly"),
    ("raw", "gpio_input", "a gpio_input binding needs a Boolean or unsigned integer "
     "(UInt8, UInt16, UInt32, UInt64) attribute; 'raw' is of type Int16"),
    ("level", "gpio_input", "a gpio_input binding needs a Boolean or unsigned integer "
     "(UInt8, UInt16, UInt32, UInt64) attribute; 'level' is of type Integer(0,100)"),
    ("volts", "gpio_input", "a gpio_input binding needs a Boolean or unsigned integer "
     "(UInt8, UInt16, UInt32, UInt64) attribute; 'volts' is of type Double"),
    ("relay", "gpio_input", "a gpio_input binding needs a readonly attribute (the "
     "line writes the parameter); 'relay' is writable"),
    ("duty_ns", "gpio_input", "a gpio_input binding needs a readonly attribute (the "
     "line writes the parameter); 'duty_ns' is writable"),
    ("door", "i2c_register", "an i2c_register binding needs an integer or "
     "floating-point attribute; 'door' is of type Boolean"),
    ("vset", "i2c_register", "an i2c_register binding needs a readonly attribute (the "
     "register writes the parameter); 'vset' is writable"),
    ("relay", "pwm_duty", "a pwm_duty binding needs an integer or floating-point "
     "attribute; 'relay' is of type Boolean"),
    ("volts", "pwm_duty", "a pwm_duty binding needs a writable attribute (it drives "
     "the channel from the parameter); 'volts' is readonly"),
    ("count", "pwm_duty", "a pwm_duty binding needs a writable attribute (it drives "
     "the channel from the parameter); 'count' is readonly"),
    ("name", "i2c_register", "'name' of type String cannot be bound to hardware: "
     "strings never are"),
    ("blob", "i2c_register", "'blob' of type ByteBuffer cannot be bound to hardware: "
     "byte buffers never are"),
    ("state", "pwm_duty", "'state' of type p.Dev.State cannot be bound to hardware: "
     "enumerations never are"),
    ("flags", "gpio_input", "'flags' of type Boolean[] cannot be bound to hardware: "
     "arrays never are"),
])
def test_type_rules(error, attr, kind, message):
    col = len(f"attribute {attr} {{ ") + 1
    assert error(_binding(attr, kind)) == f"3:{col}: error: {message}"


@pytest.mark.parametrize("attr, kind", [
    ("relay", "gpio_output"), ("door", "gpio_input"), ("pulses", "gpio_input"),
    ("raw", "i2c_register"), ("level", "i2c_register"), ("volts", "i2c_register"),
    ("count", "i2c_register"), ("pulses", "i2c_register"),
    ("duty", "pwm_duty"), ("duty_ns", "pwm_duty"), ("vset", "pwm_duty")])
def test_types_each_kind_accepts(compiled, attr, kind):
    assert f" hw={kind.replace('_', '-')} " in compiled(_binding(attr, kind), attr)


def test_type_rule_on_a_struct_field(error):
    assert error('attribute pair {\n  field b { HwBinding = gpio_output '
                 'HwDevice = "c" HwLine = 0 } }') == (
        "4:13: error: a gpio_output binding needs a Boolean attribute; 'pair.b' is of "
        "type Double")


# --- one line, one channel ------------------------------------------------------

@pytest.mark.parametrize("second, message", [
    ('attribute door { HwBinding = gpio_input HwDevice = "pbus-sim0" HwLine = "A0" }',
     "4:18: error: GPIO line \"A0\" of device \"pbus-sim0\" is already bound to 'relay' "
     "(at dev.fdepl:3:19); 'door' cannot bind it too"),
    ('attribute vset { Default = 1 }\n'
     'attribute pulses { HwBinding = gpio_input HwDevice = "pbus-sim0" HwLine = "A0" }',
     "5:20: error: GPIO line \"A0\" of device \"pbus-sim0\" is already bound to 'relay' "
     "(at dev.fdepl:3:19); 'pulses' cannot bind it too"),
])
def test_gpio_line_bound_twice(error, second, message):
    first = 'attribute relay { HwBinding = gpio_output HwDevice = "pbus-sim0" HwLine = "A0" }'
    assert error(first + "\n" + second) == message


def test_gpio_offset_bound_twice(error):
    assert error('attribute door { HwBinding = gpio_input HwDevice = "c" HwLine = 7 }\n'
                 'attribute pulses { HwBinding = gpio_input HwDevice = "c" HwLine = 7 }'
                 ) == ("4:20: error: GPIO line offset 7 of device \"c\" is already bound to "
                       "'door' (at dev.fdepl:3:18); 'pulses' cannot bind it too")


def test_pwm_channel_bound_twice(error):
    # HwChannel defaults to 0 on the first
    assert error('attribute duty { HwBinding = pwm_duty HwDevice = "p" HwPeriodNs = 10 }\n'
                 'attribute duty_ns { HwBinding = pwm_duty HwDevice = "p" '
                 'HwPeriodNs = 20 HwChannel = 0 }') == (
        "4:21: error: PWM channel 0 of device \"p\" is already bound to 'duty' (at "
        "dev.fdepl:3:18); 'duty_ns' cannot bind it too")


# --- the demo instrument ----------------------------------------------------------

def test_psu_hw_is_psu_plus_bindings():
    """examples/psu/psu-hw.fdepl is psu.fdepl plus Hw keys: the schemas are the
    same but for the banner and the `hw*` keys of the six bound parameters."""
    plain = emit_schema.render(build(ROOT / "examples/psu/psu.fdepl")[0]).splitlines()
    bound = emit_schema.render(build(ROOT / "examples/psu/psu-hw.fdepl")[0]).splitlines()
    assert [line.split(" hw=")[0] for line in bound[1:]] == plain[1:]
    assert [line.split()[1] for line in bound if " hw=" in line] == [
        "output_enable", "fan_duty", "measured_voltage", "measured_current",
        "temperature", "interlock_open"]
