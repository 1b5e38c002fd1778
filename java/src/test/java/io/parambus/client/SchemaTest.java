package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.parambus.Enumerator;
import io.parambus.ParamType;
import io.parambus.ParambusException;
import io.parambus.UpdateClass;

import java.io.IOException;
import java.nio.file.Files;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The compiled schema as the client reads it (docs/schema-format.md), on the socket tests'
 * fixture, and the value texts of the C library's value.c (parse, check, format).
 */
class SchemaTest {
    private static final HexFormat HEX = HexFormat.of();

    private static Schema server() throws IOException {
        return Schema.parse(Files.readAllBytes(Pbusd.fixture("tests/server/fixtures/server.pbs")));
    }

    @Test
    void theServerFixtureReadsAsWritten() throws IOException {
        Schema s = server();
        assertEquals("com.example.test.ServerTest", s.interfaceName());
        assertEquals(1, s.interfaceMajor());
        assertEquals(2, s.interfaceMinor());
        assertEquals(26, s.paramCount());

        ParamInfo m = s.param("identity.manufacturer");
        assertEquals(ParamType.STRING, m.type());
        assertEquals(32, m.valueSize());
        assertTrue(m.isReadOnly());
        assertEquals(UpdateClass.CONSTANT, m.updateClass());
        assertEquals("ACME Instruments", new String(m.defaultValue(), java.nio.charset.StandardCharsets.UTF_8));
        assertEquals("Maker of the instrument", m.description());

        ParamInfo v = s.param("voltage_setpoint");
        assertEquals(12, v.index());
        assertEquals("V", v.unit());
        assertEquals(0.0, v.min());
        assertEquals(30.0, v.max());
        assertEquals(0.001, Double.longBitsToDouble(v.stepBits()));
        assertTrue(v.isPersistent() && v.hasStep() && !v.isReadOnly());
        assertEquals("operators", v.group());
        assertEquals("Target voltage \"set\" \\ tab\tend", v.description());
        assertEquals("°C", s.param("temperature").unit());

        ParamInfo mode = s.param("mode");
        assertEquals(ParamType.ENUM, mode.type());
        assertEquals(List.of(new Enumerator(0, "OFF"), new Enumerator(1, "ON"),
                new Enumerator(2, "TRIPPED"), new Enumerator(-1, "STANDBY")), mode.enumerators());
        assertEquals("com.example.test.CliTest.Mode", mode.enumName());
        assertEquals("STANDBY", mode.enumLabel(-1));
        assertArrayEquals(new byte[4], mode.defaultValue());

        ParamInfo limits = s.param("limits");
        assertEquals(ParamType.DOUBLE_ARRAY, limits.type());
        assertEquals(4, limits.count());
        assertEquals(32, limits.valueSize());
        assertEquals(-100.0, limits.min());
        assertEquals("1.5,-2,3", limits.format(limits.defaultValue()));
        assertEquals(0, s.param("counters").defaultValue().length);
        assertTrue(s.param("counters").hasDefault());
        assertFalse(s.param("fresh").hasDefault());
        assertTrue(s.param("secret").isNoRead());
        assertTrue(s.param("quiet").isNoSubscriptions());
        assertEquals(-1, s.find("nothing"));
        assertArrayEquals(new int[] {0, 1}, s.subscribableWithPrefix("identity."));
        int[] all = s.subscribableWithPrefix("");
        assertEquals(24, all.length);
        assertFalse(java.util.Arrays.stream(all).anyMatch(i -> i == s.find("secret") || i == s.find("quiet")));
        ParambusException e = assertThrows(ParambusException.class, () -> s.param("nothing"));
        assertEquals("ENOENT", e.errno());
        assertTrue(e.getMessage().contains("'nothing'"), e.getMessage());
    }

    @Test
    void theHashCoversRecordLinesOnly() throws IOException {
        byte[] text = Files.readAllBytes(Pbusd.fixture("tests/server/fixtures/server.pbs"));
        String withMore = "# another comment\n\n" + new String(text, java.nio.charset.StandardCharsets.UTF_8) + "\n# end\n";
        assertEquals(Schema.hash(text), Schema.parse(withMore).hash());
        assertEquals(server().hash(), Schema.hash(text));
        String changed = new String(text, java.nio.charset.StandardCharsets.UTF_8).replace("max=1000 default=0 unit=V",
                "max=1001 default=0 unit=V");
        assertFalse(Schema.hash(changed.getBytes(java.nio.charset.StandardCharsets.UTF_8)) == Schema.hash(text));
    }

    @Test
    void malformedSchemasAreRefusedNamingTheLine() {
        String head = "pbus-schema 1\ninterface a.B 1.0\n";
        String[][] cases = {
            {"pbus-schema 1\ninterface a.B 1.0", "newline"},
            {"pbus-schema 2\n", "version"},
            {head + "param x quad\n", "unknown type"},
            {head + "param x int8 min=5 max=1\n", "above max"},
            {head + "param x int8 max=5 default=9\n", "default"},
            {head + "param x int8\nparam x int16\n", "duplicate parameter"},
            {head + "param x string size=4 desc=%4\n", "percent"},
            {head + "param x string\n", "size="},
            {head + "method m\nparam x int8\n", "after a type, method or broadcast"},
            {head + "param x  int8\n", "one space"},
            {head + "param x enum enum=a.E\n", "unknown enum"},
            {head + "param x int8 flags=loud\n", "unknown flag"},
            {head + "param 9x int8\n", "invalid parameter name"},
            {head + "thing x\n", "unknown record"},
            {"interface a.B 1.0\n", "pbus-schema 1"},
        };
        for (String[] c : cases) {
            ParambusException e = assertThrows(ParambusException.class, () -> Schema.parse(c[0]), c[0]);
            assertEquals("EINVAL", e.errno());
            assertTrue(e.getMessage().contains(c[1]) && e.getMessage().startsWith("schema line "), e.getMessage());
        }
        // Unknown keys (a hardware binding's) are kept, not refused.
        Schema ok = Schema.parse(head + "param x int8 hw=gpio-output hw-line=A0\nmethod m in=a:int32\n");
        assertEquals("A0", ok.param("x").extraKeys().get("hw-line"));
    }

    @Test
    void valuesParseCheckAndFormatAsTheCLibraryDoes() throws IOException {
        Schema s = server();
        assertEquals("fe", HEX.formatHex(s.param("trim").parse("-2")));
        assertEquals("ERANGE", assertThrows(ParambusException.class, () -> s.param("trim").parse("11")).errno());
        assertEquals("EINVAL", assertThrows(ParambusException.class, () -> s.param("trim").parse("0x1")).errno());
        assertEquals("ERANGE", assertThrows(ParambusException.class, () -> s.param("fan_level").parse("-1")).errno());
        assertEquals("01", HEX.formatHex(s.param("output_enable").parse("on")));
        assertEquals("ffffffff", HEX.formatHex(s.param("mode").parse("standby")));
        assertEquals("ERANGE", assertThrows(ParambusException.class, () -> s.param("mode").parse("7")).errno());
        assertEquals("EMSGSIZE", assertThrows(ParambusException.class, () -> s.param("label").parse("123456789")).errno());
        assertEquals("EINVAL", assertThrows(ParambusException.class, () -> s.param("level").parse("nan")).errno());
        assertEquals("ERANGE", assertThrows(ParambusException.class, () -> s.param("level").parse("1e400")).errno());
        assertEquals("0102", HEX.formatHex(s.param("calibration").parse("0102")));
        assertEquals("EMSGSIZE", assertThrows(ParambusException.class, () -> s.param("limits").parse("1,2,3,4,5")).errno());

        ParamInfo level = s.param("level");
        assertEquals(0, ValueCodec.check(level, level.parse("2.5"), 0, 8));
        assertEquals(Errno.EINVAL, ValueCodec.check(level, new byte[4], 0, 4));
        assertEquals(Errno.EMSGSIZE, ValueCodec.check(level, new byte[9], 0, 9));
        byte[] nan = new byte[8];
        ValueCodec.storeRaw(nan, 0, 8, Double.doubleToRawLongBits(Double.NaN));
        assertEquals(Errno.ERANGE, ValueCodec.check(level, nan, 0, 8), "NaN with limits");
        assertEquals(0, ValueCodec.check(s.param("fresh"), nan, 0, 8), "NaN without limits");
        assertEquals(Errno.EINVAL, ValueCodec.check(s.param("output_enable"), new byte[] {2}, 0, 1));
        assertEquals(Errno.EINVAL, ValueCodec.check(s.param("label"), new byte[] {(byte) 0xC3, 0x28}, 0, 2));

        // C's %g, shortest that reads back: what pbus get prints.
        String[][] doubles = {{"0.1", "0.1"}, {"1e-05", "0.00001"}, {"100", "100"}, {"1e+15", "1e15"}, {"0.0001", "0.0001"},
            {"1.2345678901234568e+20", "123456789012345678901"}, {"-2.5", "-2.5"}, {"0.30000000000000004", "0.30000000000000004"},
            {"123456789012345", "123456789012345"}, {"1e+16", "1e16"}, {"4.94065645841247e-324", "4.9e-324"}};
        for (String[] d : doubles) {
            assertEquals(d[0], ValueCodec.formatFloating(Double.parseDouble(d[1]), false), d[1]);
        }
        assertEquals("0.1", ValueCodec.formatFloating(0.1f, true));
        assertEquals("16777216", ValueCodec.formatFloating(16777216f, true));
        assertEquals("-0", ValueCodec.formatFloating(-0.0, false));
        assertEquals("-inf", ValueCodec.formatFloating(Double.NEGATIVE_INFINITY, false));
        assertEquals("18446744073709551615", ValueCodec.formatNumber(ParamType.UINT64, -1L));
    }
}
