package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.FuzzTest;
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
 * hash, interface, version and parameter names in the same order. The only exception is
 * {@link ParambusException} EINVAL with a one-line message naming the line. Of an
 * accepted schema: the hash is {@link Schema#hash(byte[])} of the text; names are unique
 * and found at their index; every size fits its type (1 … 65536, a scalar's its
 * element's, an array's a whole number of elements); limits only where they apply,
 * with min ≤ max; a default is a value of its parameter ({@code ValueCodec.check}) that
 * formats to text that parses back to the same bytes; an enum parameter has
 * enumerators.
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
            if (s != null) {
                fail("the Java decoder accepts a schema the C loader refuses (" + c.error() + ")");
            }
            return;
        }
        if (s == null) {
            Schema.parse(text); // throws again: the Java refusal, for the report
            fail("unreachable");
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
                assertArrayEquals(d, p.parse(text), at + ": the default's text " + text + " parses to other bytes");
            }
        }
    }

    private static ParamInfo withMaxOnly(ParamInfo p) {
        return new ParamInfo(p.index(), p.name(), p.type(), p.valueSize(), p.flags(), p.updateClass(), "", "", "", false,
                0, true, p.maxBits(), false, 0, null, p.enumName(), p.enumerators(), java.util.Map.of());
    }
}
