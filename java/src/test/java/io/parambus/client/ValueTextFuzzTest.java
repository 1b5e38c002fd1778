package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.parambus.ParamType;
import io.parambus.fuzz.CLib;
import io.parambus.fuzz.Instance;
import io.parambus.fuzz.Vectors;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fuzz target {@code java-text} (tests/fuzz/run): values as text, the way a user, a
 * script or a schema's default gives them ({@link ValueCodec#parse}, behind
 * {@link ParamInfo#parse} and every {@code default=}) and the way they are shown
 * ({@link ValueCodec#format}), for every parameter of the two schemas of the segment
 * vectors (tests/vectors/segment.pbs and segment-edge.pbs: every type, limits, enums with
 * negative values, 64-bit edges, arrays). The input's first byte picks the parameter,
 * the rest is the text (UTF-8; up to a NUL, which no C string holds).
 *
 * <p>Checked against the C library, the reference (docs/cli.md's rules;
 * {@code pbus_param_parse()} and {@code pbus_param_format()} on the same parameters of
 * the vectors' images installed as instances): the Java parser accepts exactly the texts
 * the C one accepts, to the same bytes, and refuses the others with the same errno
 * (EINVAL, ERANGE or EMSGSIZE, the only exception); an accepted value is one
 * {@code ValueCodec.check} takes, formats to the C library's text, and that text parses
 * back to the same bytes. The rest of the input, taken as a stored value of the
 * parameter, formats to the C library's text too. Two faults of the C library are let
 * through: a sign alone ({@code -}, {@code +}), which it takes for the integer 0, and
 * ERANGE rather than EINVAL for a malformed number whose first part overflows.
 *
 * <p>Seeds: texts of every kind for the parameters (edges, limits, labels, errors).
 */
class ValueTextFuzzTest {
    /** The parameters of both schemas, in order, each with its C table and index. */
    private record Target(ParamInfo param, CLib.Table table, int index) {
    }

    private static List<Target> targets;
    private static final List<Instance> INSTANCES = new ArrayList<>();
    private static final List<CLib.Table> TABLES = new ArrayList<>();

    private static synchronized List<Target> targets() {
        if (targets == null) {
            List<Target> all = new ArrayList<>();
            for (String[] v : new String[][] {{"segment.pbs", "segment-v2.hex"}, {"segment-edge.pbs", "segment-edge.hex"}}) {
                Schema schema = Schema.parse(Vectors.file("tests/vectors/" + v[0]));
                Instance inst = new Instance("text" + INSTANCES.size());
                INSTANCES.add(inst);
                inst.put(Vectors.hex(v[1]));
                int[] r = new int[1];
                CLib.Table t = CLib.Table.open(inst.name, r);
                if (t == null) {
                    throw new IllegalStateException("the C library does not open " + v[1] + ": " + r[0]);
                }
                TABLES.add(t);
                assertEquals(schema.paramCount(), t.paramCount(), v[0]);
                for (ParamInfo p : schema.params()) {
                    assertEquals(p.name(), new String(t.describe(p.index()).name(), StandardCharsets.UTF_8), v[0]);
                    all.add(new Target(p, t, p.index()));
                }
            }
            targets = all;
        }
        return targets;
    }

    @AfterAll
    static void close() {
        TABLES.forEach(CLib.Table::close);
        INSTANCES.forEach(Instance::close);
    }

    private static byte[] seed(String param, String text) {
        List<Target> all = targets();
        for (int k = 0; k < all.size(); k++) {
            if (all.get(k).param().name().equals(param)) {
                byte[] t = text.getBytes(StandardCharsets.UTF_8);
                byte[] b = new byte[1 + t.length];
                b[0] = (byte) k;
                System.arraycopy(t, 0, b, 1, t.length);
                return b;
            }
        }
        throw new IllegalArgumentException(param);
    }

    static Stream<Arguments> seeds() {
        List<byte[]> s = new ArrayList<>();
        String[][] texts = {
            {"flag", "true"}, {"flag", "Off"}, {"flag", "2"}, {"level", "-100"}, {"level", "101"}, {"level", "-0"},
            {"count", "4294967295"}, {"count", "4294967296"}, {"count", "-1"}, {"count", "010"}, {"count", "0x10"},
            {"big", "-9000000000"}, {"ratio", "0.25"}, {"ratio", "3.4028235e38"}, {"ratio", "3.4028234e38"}, {"ratio", "1e-46"},
            {"volts", "30.0000001"}, {"volts", "1.5e1"}, {"volts", "nan"}, {"volts", "inf"}, {"volts", " 1"},
            {"name", "café"}, {"name", "twenty-one bytes long"}, {"blob", "00ff7F"}, {"blob", "0g"}, {"blob", "abc"},
            {"mode", "ON"}, {"mode", "tripped"}, {"mode", "-7"}, {"mode", "3"}, {"mode", "+1"},
            {"samples", "1,-2,3"}, {"samples", "1,,2"}, {"samples", "1,2,3,4"}, {"samples", ""}, {"samples", "x,1,1,1"},
            {"samples", "1,32768"}, {"log", "x".repeat(300)}, {"log", "x".repeat(301)},
            {"top", "18446744073709551615"}, {"top", "18446744073709551616"}, {"top", "0"},
            {"low", "-9223372036854775808"}, {"low", "-9223372036854775809"}, {"low", "0"},
            {"dneg", "-0"}, {"dneg", "1.0000000000000002"}, {"floats", "1.5,-0,1e38,1e-45"}, {"doubles", "1e308,2e308"},
            {"bools", "true,off,ON"}, {"empty", ""}, {"level", "HIGH"}, {"level", "high"}, {"level", "1000"},
            {"nolabel", "LOW"}, {"odd", "1,2,3,4,5"}, {"text", ""}, {"wrap4", "é".repeat(151)},
        };
        for (String[] t : texts) {
            s.add(seed(t[0], t[1]));
        }
        return Vectors.arguments(s);
    }

    @MethodSource("seeds")
    @FuzzTest
    @Timeout(10)
    void parseAndFormat(byte[] input) {
        if (input.length == 0) {
            return;
        }
        List<Target> all = targets();
        Target t = all.get(Byte.toUnsignedInt(input[0]) % all.size());
        ParamInfo p = t.param();
        String text = new String(input, 1, input.length - 1, StandardCharsets.UTF_8);
        int nul = text.indexOf('\0');
        if (nul >= 0) {
            text = text.substring(0, nul);
        }
        String at = p.name() + " '" + text + "'";
        byte[] java;
        int javaErrno = 0;
        try {
            java = ValueCodec.parse(p, text);
        } catch (ValueCodec.Invalid e) {
            assertTrue(e.errno == Errno.EINVAL || e.errno == Errno.ERANGE || e.errno == Errno.EMSGSIZE, at + ": " + e.errno);
            java = null;
            javaErrno = e.errno;
        }
        CLib.Parsed c = t.table().parse(t.index(), text.getBytes(StandardCharsets.UTF_8));
        if (loneSign(p, text) || c.result() == -Errno.ERANGE && javaErrno == Errno.EINVAL && malformedFloat(p, text)) {
            return;
        }
        assertEquals(c.result() == 0 ? "accepted" : CLib.errnoName(c.result()),
                java != null ? "accepted" : Errno.name(javaErrno), at);
        if (java != null) {
            assertArrayEquals(c.value(), java, at + ": the bytes");
            assertEquals(0, ValueCodec.check(p, java, 0, java.length), at + ": check");
            String shown = ValueCodec.format(p, java, 0, java.length);
            assertEquals(new String(t.table().format(t.index(), java), StandardCharsets.UTF_8), shown, at + ": format");
            assertArrayEquals(java, ValueCodec.parse(p, shown), at + ": its text '" + shown + "' parses to other bytes");
        }
        // The rest of the input as a stored value of the parameter (of a length it can have).
        byte[] stored = Arrays.copyOfRange(input, 1, input.length);
        ParamType type = p.type();
        int es = type.elementSize();
        int n = Math.min(stored.length, p.valueSize());
        if (!type.isArray() && type != ParamType.STRING && type != ParamType.BYTES) {
            n = stored.length >= es ? es : -1;
        }
        if (n >= 0) {
            stored = Arrays.copyOf(stored, n / es * es);
            assertEquals(new String(t.table().format(t.index(), stored), StandardCharsets.UTF_8),
                    ValueCodec.format(p, stored, 0, stored.length), p.name() + ": format of stored bytes");
        }
    }

    private static final java.util.regex.Pattern DECIMAL =
            java.util.regex.Pattern.compile("[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?");

    /**
     * Whether {@code text} holds a floating-point element that is not a decimal number
     * whole, which the C library refuses with ERANGE rather than EINVAL when the part
     * strtod() read overflows ({@code 1e999x}): a fault of the C library.
     */
    private static boolean malformedFloat(ParamInfo p, String text) {
        if (!p.type().isFloating()) {
            return false;
        }
        for (String item : p.type().isArray() ? text.split(",", -1) : new String[] {text}) {
            if (!DECIMAL.matcher(item).matches()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code text} is an integer parameter's sign alone, or an array of them with
     * one such element: the C library's pbus_number_parse() lets strtoll() parse no
     * digit and takes it for 0; docs/cli.md asks for digits.
     */
    private static boolean loneSign(ParamInfo p, String text) {
        ParamType e = p.type().element();
        if (!e.isSignedInteger() && !e.isUnsignedInteger() || e == ParamType.ENUM) {
            return false;
        }
        for (String item : p.type().isArray() ? text.split(",", -1) : new String[] {text}) {
            if (item.equals("-") || item.equals("+")) {
                return true;
            }
        }
        return false;
    }
}
