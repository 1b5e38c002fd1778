package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.parambus.Enumerator;
import io.parambus.ParamType;
import io.parambus.ParambusException;
import io.parambus.fuzz.CLib;
import io.parambus.fuzz.Vectors;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fuzz target {@code java-schema} (tests/fuzz/run): the compiled schema's decoder
 * {@link Schema#parse(byte[])} (docs/schema-format.md), which reads the text pbusd sends
 * in its SCHEMA reply. The input is the schema's text.
 *
 * <p>Checked against the C loader ({@code pbus_schema_parse()}, the reference): the Java
 * decoder accepts exactly the texts the C one accepts, and of those it gives the same
 * hash, interface, version and parameter names in the same order. Two differences are
 * expected and only they are let through: the type, method and broadcast records, which
 * the Java decoder does not interpret; and texts that only the C library's leniencies
 * take: an integer that is a sign alone, which it takes for 0 ({@link #loneSign}); an
 * interface version with a sign or above 2^32 − 1 ({@link #lenientVersion}); bytes the
 * encoding escapes left raw, and numbers after white space ({@link #outsideTheEncoding}).
 * Whatever the text, the Java decoder accepts nothing that the C one refuses. The only exception is
 * {@link ParambusException} EINVAL with a one-line message naming the line. Of an
 * accepted schema: the hash is {@link Schema#hash(byte[])} of the text; names are unique
 * and found at their index; every size fits its type (1 … 65536, a scalar's its
 * element's, an array's a whole number of elements); limits only where they apply,
 * with min ≤ max; a default is a value of its parameter ({@code ValueCodec.check}) that
 * formats to text that parses back to the same bytes (unless two labels of its enum read
 * the same as text: labels need not be UTF-8); an enum parameter has enumerators.
 *
 * <p>Seeds: every compiled schema of the source tree's fixtures and vectors.
 */
class SchemaFuzzTest {
    static Stream<Arguments> seeds() {
        List<byte[]> texts = new ArrayList<>();
        for (String f : List.of("tests/vectors/segment.pbs", "tests/vectors/segment-edge.pbs",
                "tests/vectors/segment-small.pbs", "tests/server/fixtures/server.pbs", "tests/cli/fixtures/test.pbs")) {
            texts.add(Vectors.file(f));
        }
        return Vectors.arguments(texts);
    }

    @MethodSource("seeds")
    @FuzzTest
    @Timeout(10)
    void parse(byte[] text) {
        Schema s;
        try {
            s = Schema.parse(text);
        } catch (ParambusException e) {
            assertEquals("EINVAL", e.errno(), e.getMessage());
            assertTrue(e.getMessage().startsWith("schema line ") && !e.getMessage().contains("\n"),
                    "the refusal's message: " + e.getMessage());
            s = null;
        }
        CLib.SchemaResult c = CLib.parseSchema(text);
        if (c.result() < 0) {
            if (s != null && !rpcRecord(text, c.error())) {
                fail("the Java decoder accepts a schema the C loader refuses (" + c.error() + ")");
            }
            return;
        }
        if (s == null) {
            try {
                Schema.parse(text);
            } catch (ParambusException e) {
                if (loneSign(e.getMessage()) || lenientVersion(text) || outsideTheEncoding(text)) {
                    return;
                }
                fail("the Java decoder refuses a schema the C loader accepts: " + e.getMessage());
            }
        }
        assertEquals(c.hash(), s.hash(), "hash");
        assertEquals(Schema.hash(text), s.hash(), "hash of the text");
        assertEquals(c.interfaceName(), s.interfaceName(), "interface");
        assertEquals(c.major(), s.interfaceMajor(), "major");
        assertEquals(c.minor(), s.interfaceMinor(), "minor");
        assertEquals(c.names(), s.params().stream().map(ParamInfo::name).toList(), "parameter names");
        assertArrayEquals(text, s.text(), "text");
        properties(s);
    }

    /**
     * Whether the C loader's refusal ({@code fuzz:LINE: why}) is of a type, method or
     * broadcast record, which the Java decoder checks only for their place (it does not
     * use them: the parameter protocol has no methods) — by design, as {@link Schema} says.
     */
    static boolean rpcRecord(byte[] text, String error) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("fuzz:([0-9]+): .*", java.util.regex.Pattern.DOTALL).matcher(error);
        if (!m.matches()) {
            return false;
        }
        String[] lines = new String(text, java.nio.charset.StandardCharsets.ISO_8859_1).split("\n", -1);
        int line = Integer.parseInt(m.group(1));
        if (line < 1 || line > lines.length) {
            return false;
        }
        String l = lines[line - 1];
        return l.startsWith("type ") || l.startsWith("method ") || l.startsWith("broadcast ");
    }

    /**
     * Whether the text leaves the format's encoding where the C loader is lenient: a
     * record line with a byte outside 0x21–0x7E other than its single spaces (which the
     * encoding escapes), or a value or array element that starts with an escaped space
     * or control character of C's isspace() (strtoll() skips them).
     */
    static boolean outsideTheEncoding(byte[] text) {
        String t = new String(text, java.nio.charset.StandardCharsets.ISO_8859_1);
        for (String l : t.split("\n", -1)) {
            if (l.isEmpty() || l.charAt(0) == '#') {
                continue;
            }
            for (int k = 0; k < l.length(); k++) {
                char c = l.charAt(k);
                if (c != ' ' && (c < 0x21 || c > 0x7E)) {
                    return true;
                }
            }
        }
        return java.util.regex.Pattern.compile("[=,]%(0[9A-D]|20)").matcher(t).find();
    }

    /**
     * Whether the interface record's version is one that only the C loader's
     * {@code sscanf("%u.%u")} takes: with a sign, or a number above 2^32 − 1 (which it
     * wraps). The Java decoder takes the digits of two u32, as the format writes them.
     */
    static boolean lenientVersion(byte[] text) {
        for (String l : new String(text, java.nio.charset.StandardCharsets.ISO_8859_1).split("\n", -1)) {
            String[] tok = l.split(" ", -1);
            if (tok.length == 3 && tok[0].equals("interface")) {
                String[] v = tok[2].split("\\.", -1);
                if (v.length != 2) {
                    return false;
                }
                for (String n : v) {
                    if (!n.matches("[0-9]+") || new java.math.BigInteger(n).bitLength() > 32) {
                        return true;
                    }
                }
                return false;
            }
        }
        return false;
    }

    private static final java.util.regex.Pattern LONE_SIGN_LIMIT =
            java.util.regex.Pattern.compile(".*: (min|max|step) '[-+]' is not a [a-z0-9]+ \\(EINVAL\\)");
    private static final java.util.regex.Pattern INTEGER_DEFAULT =
            java.util.regex.Pattern.compile(".*: default '(.*)': not a decimal integer \\(EINVAL\\)");

    /**
     * Whether a Java refusal is of an integer that is a sign alone ({@code -}, {@code +}),
     * which the C library takes for 0 (its pbus_number_parse() lets strtoll() parse no
     * digit; schema-format.md asks for digits): a known fault of the reference, not
     * of this decoder, reported rather than followed.
     */
    static boolean loneSign(String message) {
        if (LONE_SIGN_LIMIT.matcher(message).matches()) {
            return true;
        }
        java.util.regex.Matcher m = INTEGER_DEFAULT.matcher(message);
        if (m.matches()) {
            for (String e : m.group(1).split(",", -1)) {
                if (e.equals("-") || e.equals("+")) {
                    return true;
                }
            }
        }
        return false;
    }

    private static void properties(Schema s) {
        Set<String> names = new HashSet<>();
        for (int i = 0; i < s.paramCount(); i++) {
            ParamInfo p = s.param(i);
            String at = "param " + p.name();
            assertEquals(i, p.index(), at);
            assertTrue(names.add(p.name()), at + ": twice");
            assertEquals(i, s.find(p.name()), at + ": found");
            ParamType t = p.type();
            int es = t.elementSize();
            assertTrue(p.valueSize() >= 1 && p.valueSize() <= 65536 && p.valueSize() % es == 0, at + ": size");
            assertTrue(t.isArray() || t == ParamType.STRING || t == ParamType.BYTES || p.valueSize() == es, at + ": size");
            boolean numeric = t != ParamType.STRING && t != ParamType.BYTES && t.element() != ParamType.BOOL
                    && t.element() != ParamType.ENUM;
            assertTrue(numeric || !p.hasMin() && !p.hasMax() && !p.hasStep(), at + ": limits of a " + t);
            if (p.hasMin() && p.hasMax()) {
                assertTrue(ValueCodec.withinLimits(withMaxOnly(p), p.minBits()), at + ": min above max");
            }
            assertEquals(t.element() == ParamType.ENUM, !p.enumerators().isEmpty(), at + ": enumerators");
            if (p.hasDefault()) {
                byte[] d = p.defaultValue();
                assertEquals(0, ValueCodec.check(p, d, 0, d.length), at + ": the default is no value of it");
                String text = p.format(d);
                // Labels that are not UTF-8 are free text (U+FFFD for what is not): two of
                // them may read the same, and then the text names the first.
                boolean labelsDistinct = p.enumerators().stream().map(Enumerator::label).distinct().count()
                        == p.enumerators().size();
                if (labelsDistinct) {
                    assertArrayEquals(d, p.parse(text), at + ": the default's text " + text + " parses to other bytes");
                }
            }
        }
    }

    private static ParamInfo withMaxOnly(ParamInfo p) {
        return new ParamInfo(p.index(), p.name(), p.type(), p.valueSize(), p.flags(), p.updateClass(), "", "", "", false,
                0, true, p.maxBits(), false, 0, null, p.enumName(), p.enumerators(), java.util.Map.of());
    }
}
