package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.parambus.ParamType;
import io.parambus.ParambusException;
import io.parambus.Status;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client's requests against a real pbusd serving tests/server/fixtures/server.pbs:
 * the handshake, get of every type of the fixture, batched get, atomic set, and every
 * refusal of the server (and of the client, before sending), with the errno names and
 * messages they carry.
 */
class ClientTest {
    private static Pbusd pbusd;
    private static PbusClient client;
    private static Schema schema;

    @BeforeAll
    static void start() throws IOException {
        pbusd = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs"), "--save-delay", "0");
        client = pbusd.client();
        schema = client.schema();
    }

    @AfterAll
    static void stop() throws IOException {
        if (client != null) {
            client.close();
        }
        if (pbusd != null) {
            pbusd.close();
        }
    }

    private static int i(String name) {
        return schema.find(name);
    }

    @Test
    void handshakeTellsTheServerAndItsSchema() throws IOException {
        PbusClient.ServerInfo info = client.serverInfo();
        assertEquals(1, info.version());
        assertEquals(pbusd.pid(), info.pid());
        assertEquals(pbusd.instance, info.instance());
        assertEquals("com.example.test.ServerTest", info.interfaceName());
        assertEquals(26, info.paramCount());
        assertEquals(1 << 20, info.maxFrame());
        assertEquals(64, info.maxSubscriptions());
        byte[] file = Files.readAllBytes(Pbusd.fixture("tests/server/fixtures/server.pbs"));
        assertArrayEquals(file, schema.text(), "SCHEMA is the file as pbusd loaded it");
        assertEquals(info.schemaHash(), schema.hash(), "the client's hash of the text is pbusd's");
        assertTrue(client.isConnected());
        String stats = client.stats();
        @SuppressWarnings("unchecked")
        Map<String, Object> json = (Map<String, Object>) MiniJson.parse(stats);
        assertEquals(pbusd.instance, json.get("instance"));
        assertTrue(stats.contains("\"name\": \"junit\"") || stats.contains("\"name\":\"junit\""), stats);
        client.ping(new byte[] {0, 1, 2, (byte) 0xFF});
        client.ping(new byte[0]);
    }

    @Test
    void connectRefusals() throws IOException {
        ServerErrorException stale = assertThrows(ServerErrorException.class,
                () -> PbusClient.connect(pbusd.instance, pbusd.options().withSchemaHash(0x1234)));
        assertEquals("ESTALE", stale.errno());
        assertEquals(-116, stale.code());
        assertTrue(stale.serverMessage().contains("schema hash differs"), stale.serverMessage());
        try (PbusClient same = PbusClient.connect(pbusd.instance, pbusd.options().withSchemaHash(schema.hash()))) {
            assertEquals(schema.hash(), same.schema().hash());
        }
        Path empty = Files.createTempDirectory("pbus-java-empty");
        try {
            ConnectionException none = assertThrows(ConnectionException.class,
                    () -> PbusClient.connect(pbusd.instance, pbusd.options().withSocketDir(empty)));
            assertEquals("ENOENT", none.errno());
            assertTrue(none.getMessage().contains(pbusd.instance + ".sock"), none.getMessage());
        } finally {
            Files.delete(empty);
        }
        ParambusException bad = assertThrows(ParambusException.class, () -> PbusClient.connect("../x", pbusd.options()));
        assertEquals("EINVAL", bad.errno());
    }

    @Test
    void getOfEveryTypeOfTheFixture() throws IOException {
        // A pbusd of its own: the values are the schema's defaults, which other tests change.
        try (Pbusd own = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs")); PbusClient client = own.client()) {
            everyTypeHasItsDefault(client);
        }
    }

    private static void everyTypeHasItsDefault(PbusClient client) {
        assertEquals("ACME Instruments", client.get("identity.manufacturer").asString());
        assertEquals("SN-0001", client.get(i("identity.serial")).asString());
        Value enable = client.get("output_enable");
        assertEquals(ParamType.BOOL, enable.type());
        assertFalse(enable.asBoolean());
        assertEquals(Status.OK, enable.status());
        assertEquals(0, enable.statusCode());
        assertTrue(enable.timestampNs() > 1_600_000_000_000_000_000L, "a CLOCK_REALTIME timestamp");
        assertEquals(-5, client.get("offset_counts").asInt());
        assertEquals(-1234567890123L, client.get("energy_uj").asLong());
        assertEquals(16, client.get("averaging").asInt());
        assertEquals(1000, client.get("sample_rate").asLong());
        Value uptime = client.get("uptime_ns");
        assertEquals(ParamType.UINT64, uptime.type());
        assertEquals(0, uptime.asLong());
        assertEquals(Status.INVALID, uptime.status(), "never written, no default");
        assertEquals(1.0f, client.get("gain").asFloat());
        assertEquals(25.5, client.get("temperature").asDouble());
        assertArrayEquals(new byte[] {0, (byte) 0xFF}, client.get("calibration").asBytes());
        assertEquals("OFF", client.get("mode").asEnumLabel());
        assertArrayEquals(new double[] {1.5, -2, 3}, client.get("limits").asDoubleArray());
        assertArrayEquals(new int[0], client.get("counters").asIntArray());
        Value fresh = client.get("fresh");
        assertEquals(Status.INVALID, fresh.status());
        assertEquals(0, fresh.version());
        assertEquals("fresh = 0 [invalid, version 0]", fresh.toString());
        assertEquals("1.5,-2,3", client.get("limits").text());
    }

    /** Every type the schema language has, arrays included, at the edges of their ranges. */
    private static final String EVERY_TYPE = """
            pbus-schema 1
            interface com.example.test.EveryType 1.0
            enum com.example.test.EveryType.E A=-2147483648 B=2147483647
            param b bool
            param i8 int8
            param i16 int16
            param i32 int32
            param i64 int64
            param u8 uint8
            param u16 uint16
            param u32 uint32
            param u64 uint64
            param f float
            param d double
            param s string size=16
            param y bytes size=4
            param e enum enum=com.example.test.EveryType.E
            param ab bool[] count=3
            param ai8 int8[] count=2
            param au8 uint8[] count=2
            param ai16 int16[] count=2
            param au16 uint16[] count=2
            param ai32 int32[] count=2
            param au32 uint32[] count=2
            param ai64 int64[] count=2
            param au64 uint64[] count=2
            param af float[] count=2
            param ad double[] count=2
            """;

    @Test
    void setAndGetEveryTypeAtItsEdges() throws IOException {
        Path file = Files.createTempFile("every-type", ".pbs");
        Files.writeString(file, EVERY_TYPE);
        try (Pbusd own = Pbusd.start(file); PbusClient c = own.client()) {
            c.batch().setBoolean("b", true).setLong("i8", Byte.MIN_VALUE).setLong("i16", Short.MIN_VALUE)
                    .setLong("i32", Integer.MIN_VALUE).setLong("i64", Long.MIN_VALUE).setLong("u8", 255).setLong("u16", 65535)
                    .setLong("u32", 0xFFFFFFFFL).setLong("u64", -1L).setFloat("f", Float.MIN_VALUE)
                    .setDouble("d", -0.0).setString("s", "Grüße, 世界").setBytes("y", new byte[] {0, (byte) 0xFF})
                    .setEnum("e", "A").commit();
            int ab = c.schema().find("ab");
            c.batch().setBooleanArray(ab, new boolean[] {true, false, true}).setByteArray(ab + 1, new byte[] {-128, 127})
                    .setByteArray(ab + 2, new byte[] {(byte) 255, 1}).setShortArray(ab + 3, new short[] {Short.MIN_VALUE, 1})
                    .setShortArray(ab + 4, new short[] {(short) 65535, 2}).setIntArray(ab + 5, new int[] {Integer.MIN_VALUE, 3})
                    .setIntArray(ab + 6, new int[] {-1, 4}).setLongArray(ab + 7, new long[] {Long.MIN_VALUE, 5})
                    .setLongArray(ab + 8, new long[] {-1L, 6}).setFloatArray(ab + 9, new float[] {Float.NaN, -1.5f})
                    .setDoubleArray(ab + 10, new double[] {Double.NEGATIVE_INFINITY, Double.MAX_VALUE}).commit();
            List<Value> v = c.getMany(java.util.stream.IntStream.range(0, c.schema().paramCount()).toArray());
            assertTrue(v.get(0).asBoolean());
            assertEquals(Byte.MIN_VALUE, v.get(1).asInt());
            assertEquals(Short.MIN_VALUE, v.get(2).asInt());
            assertEquals(Integer.MIN_VALUE, v.get(3).asInt());
            assertEquals(Long.MIN_VALUE, v.get(4).asLong());
            assertEquals(255, v.get(5).asInt());
            assertEquals(65535, v.get(6).asInt());
            assertEquals(0xFFFFFFFFL, v.get(7).asLong());
            assertEquals("18446744073709551615", Long.toUnsignedString(v.get(8).asLong()));
            assertEquals(18446744073709551615.0, v.get(8).asDouble());
            assertEquals(Float.MIN_VALUE, v.get(9).asFloat());
            assertEquals(Double.doubleToRawLongBits(-0.0), Double.doubleToRawLongBits(v.get(10).asDouble()));
            assertEquals("Grüße, 世界", v.get(11).asString());
            assertArrayEquals(new byte[] {0, (byte) 0xFF}, v.get(12).asBytes());
            assertEquals("A", v.get(13).asEnumLabel());
            assertEquals(Integer.MIN_VALUE, v.get(13).asInt());
            assertArrayEquals(new boolean[] {true, false, true}, v.get(14).asBooleanArray());
            assertArrayEquals(new byte[] {-128, 127}, v.get(15).asByteArray());
            assertArrayEquals(new byte[] {(byte) 255, 1}, v.get(16).asByteArray());
            assertArrayEquals(new short[] {Short.MIN_VALUE, 1}, v.get(17).asShortArray());
            assertArrayEquals(new short[] {(short) 65535, 2}, v.get(18).asShortArray());
            assertArrayEquals(new int[] {Integer.MIN_VALUE, 3}, v.get(19).asIntArray());
            assertArrayEquals(new int[] {-1, 4}, v.get(20).asIntArray());
            assertArrayEquals(new long[] {Long.MIN_VALUE, 5}, v.get(21).asLongArray());
            assertArrayEquals(new long[] {-1L, 6}, v.get(22).asLongArray());
            assertTrue(Float.isNaN(v.get(23).asFloatArray()[0]));
            assertEquals(-1.5f, v.get(23).asFloatArray()[1]);
            assertArrayEquals(new double[] {Double.NEGATIVE_INFINITY, Double.MAX_VALUE}, v.get(24).asDoubleArray());
            assertEquals("18446744073709551615,6", v.get(22).text());
            assertEquals("-inf,1.7976931348623157e+308", v.get(24).text());
            for (Value x : v) {
                assertEquals(Status.OK, x.status(), x.name());
                assertEquals(1, x.version(), x.name());
            }
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void batchedGetKeepsTheOrderAsked() {
        List<Value> v = client.getMany(i("level"), i("trim"), i("level"), i("identity.serial"));
        assertEquals(List.of("level", "trim", "level", "identity.serial"), v.stream().map(Value::name).toList());
        assertEquals(v.get(0).version(), v.get(2).version());
        List<Value> byName = client.getMany("temperature", "identity.serial");
        assertEquals(25.5, byName.get(0).asDouble());
        assertEquals("SN-0001", byName.get(1).asString());
    }

    @Test
    void getRefusals() {
        ServerErrorException unknown = assertThrows(ServerErrorException.class, () -> client.get(99));
        assertEquals("ENOENT", unknown.errno());
        assertEquals(-2, unknown.code());
        assertTrue(unknown.serverMessage().contains("99"), unknown.serverMessage());
        assertTrue(unknown.getMessage().startsWith("get " + pbusd.instance), unknown.getMessage());
        ServerErrorException noread = assertThrows(ServerErrorException.class, () -> client.getMany(i("level"), i("secret")));
        assertEquals("EACCES", noread.errno());
        assertTrue(noread.serverMessage().contains("secret"), noread.serverMessage());
        ParambusException name = assertThrows(ParambusException.class, () -> client.get("no.such"));
        assertEquals("ENOENT", name.errno());
        assertTrue(name.getMessage().contains("'no.such'"), name.getMessage());
        assertEquals("EINVAL", assertThrows(ParambusException.class, () -> client.getMany(new int[0])).errno());
        Value level = client.get("level");
        ParambusException wrong = assertThrows(ParambusException.class, level::asBoolean);
        assertEquals("EINVAL", wrong.errno());
        assertTrue(wrong.getMessage().contains("level") && wrong.getMessage().contains("double"), wrong.getMessage());
        assertEquals("EINVAL", assertThrows(ParambusException.class, level::asString).errno());
        assertEquals("EINVAL", assertThrows(ParambusException.class, level::asIntArray).errno());
    }

    @Test
    void atomicSetAppliesEveryWrite() {
        Value before = client.get("trim");
        long[] versions = client.batch().setLong("trim", -3).setDouble("gain", 2.5).setString("label", "µA")
                .setEnum("mode", "STANDBY").setIntArray(i("counters"), new int[] {1, -2, Integer.MAX_VALUE})
                .setBytes("calibration", new byte[] {9, 8, 7}).setBoolean("output_enable", true)
                .setInt("ramp_ms", 250).commit();
        assertEquals(8, versions.length);
        assertEquals(before.version() + 1, versions[0]);
        List<Value> after = client.getMany("trim", "gain", "label", "mode", "counters", "calibration", "output_enable",
                "ramp_ms");
        assertEquals(-3, after.get(0).asInt());
        assertEquals(versions[0], after.get(0).version());
        assertEquals(2.5f, after.get(1).asFloat());
        assertEquals("µA", after.get(2).asString());
        assertEquals("STANDBY", after.get(3).asEnumLabel());
        assertArrayEquals(new int[] {1, -2, Integer.MAX_VALUE}, after.get(4).asIntArray());
        assertArrayEquals(new byte[] {9, 8, 7}, after.get(5).asBytes());
        assertTrue(after.get(6).asBoolean());
        assertEquals(250, after.get(7).asInt(), "a persistent parameter: acknowledged once saved");
        for (int k = 0; k < 8; k++) {
            assertEquals(versions[k], after.get(k).version(), after.get(k).name());
            assertEquals(Status.OK, after.get(k).status());
        }
        client.batch().setText("level", "-12.75").setText("limits", "-100,100").commit();
        assertEquals(-12.75, client.get("level").asDouble());
        assertArrayEquals(new double[] {-100, 100}, client.get("limits").asDoubleArray());
    }

    @Test
    void aBatchWithOneBadValueChangesNothing() {
        client.batch().setLong("fan_level", 2).commit();
        Value trim = client.get("fan_level");
        Value level = client.get("level");
        SetRefusedException e = assertThrows(SetRefusedException.class,
                () -> client.batch().setLong("fan_level", 3).setDouble("level", 5000).commit());
        assertEquals("ERANGE", e.errno());
        assertEquals(-34, e.code());
        assertEquals(1, e.refusedPosition());
        assertEquals("level", e.refusedParam().name());
        assertArrayEquals(new int[] {0, -34}, e.results());
        assertTrue(e.getMessage().contains("set " + pbusd.instance + ": level = 5000: outside its limits -1000 … 1000 (ERANGE)"),
                e.getMessage());
        assertTrue(e.getMessage().endsWith("nothing was written"), e.getMessage());
        Value trimAfter = client.get("fan_level");
        assertEquals(2, trimAfter.asInt(), "the good write of the refused batch was not applied");
        assertEquals(trim.version(), trimAfter.version());
        assertEquals(level.version(), client.get("level").version());
    }

    private static SetRefusedException refused(String errno, WriteBatch b) {
        SetRefusedException e = assertThrows(SetRefusedException.class, b::commit);
        assertEquals(errno, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains("(" + errno + ")"), e.getMessage());
        return e;
    }

    @Test
    void everyRefusalOfTheServer() {
        Value measured = client.get("measured_voltage");
        SetRefusedException ro = refused("EACCES", client.batch().setDouble("measured_voltage", 1.0));
        assertTrue(ro.getMessage().contains("measured_voltage = 1: read-only"), ro.getMessage());
        assertEquals(measured.version(), client.get("measured_voltage").version());
        SetRefusedException twice = refused("EINVAL", client.batch().setLong("trim", 1).setLong("trim", 2));
        assertEquals(1, twice.refusedPosition());
        assertTrue(twice.getMessage().contains("written twice"), twice.getMessage());
        SetRefusedException length = refused("EINVAL", client.batch().setRaw(i("level"), new byte[4]));
        assertTrue(length.getMessage().contains("not a valid double (4 bytes)"), length.getMessage());
        refused("EINVAL", client.batch().setRaw(i("output_enable"), new byte[] {2}));
        refused("EINVAL", client.batch().setRaw(i("label"), new byte[] {(byte) 0xC3, 0x28}));
        SetRefusedException big = refused("EMSGSIZE", client.batch().setString("label", "123456789"));
        assertTrue(big.getMessage().contains("9 bytes, above its capacity of 8"), big.getMessage());
        refused("EMSGSIZE", client.batch().setDoubleArray(i("limits"), new double[] {1, 2, 3, 4, 5}));
        refused("ERANGE", client.batch().setDoubleArray(i("limits"), new double[] {1, 200}));
        SetRefusedException notEnum = refused("ERANGE", client.batch().setInt("mode", 5));
        assertTrue(notEnum.getMessage().contains("not an enumerator of com.example.test.CliTest.Mode"), notEnum.getMessage());
        refused("ERANGE", client.batch().setLong("fan_level", 6));
        refused("ERANGE", client.batch().setDouble("level", Double.NaN));
        SetRefusedException unknown = refused("ENOENT", client.batch().setRaw(99, new byte[] {1}));
        assertTrue(unknown.getMessage().contains("parameter 99: no such parameter"), unknown.getMessage());
        // Without limits, NaN is a value like others.
        client.batch().setDouble("fresh", Double.NaN).commit();
        assertTrue(Double.isNaN(client.get("fresh").asDouble()));
    }

    @Test
    void refusalsOfTheClientBeforeSending() {
        ParambusException type = assertThrows(ParambusException.class, () -> client.batch().setDouble("trim", 1));
        assertEquals("EINVAL", type.errno());
        assertTrue(type.getMessage().contains("trim is a int8, not a double or float"), type.getMessage());
        assertEquals("ERANGE", assertThrows(ParambusException.class, () -> client.batch().setLong("trim", 300)).errno());
        assertEquals("ERANGE", assertThrows(ParambusException.class, () -> client.batch().setLong("sample_rate", -1)).errno());
        assertEquals("EINVAL", assertThrows(ParambusException.class, () -> client.batch().setEnum("mode", "NOPE")).errno());
        assertEquals("ENOENT", assertThrows(ParambusException.class, () -> client.batch().setLong("no.such", 1)).errno());
        assertEquals("EINVAL", assertThrows(ParambusException.class, () -> client.batch().commit()).errno());
        assertEquals("ERANGE", assertThrows(ParambusException.class, () -> client.batch().setText("trim", "11")).errno());
        assertEquals("EINVAL", assertThrows(ParambusException.class, () -> client.batch().setIntArray(i("limits"), new int[1])).errno());
    }

    @Test
    void subscribeRefusals() {
        ServerErrorException unknown = assertThrows(ServerErrorException.class,
                () -> client.subscribe(new int[] {99}, SubscribeOptions.defaults()));
        assertEquals("ENOENT", unknown.errno());
        assertEquals("EACCES", assertThrows(ServerErrorException.class,
                () -> client.subscribe(new int[] {i("quiet")}, SubscribeOptions.defaults())).errno());
        assertEquals("EACCES", assertThrows(ServerErrorException.class,
                () -> client.subscribe(new int[] {i("secret")}, SubscribeOptions.defaults())).errno());
        for (double bad : new double[] {-1, Double.NaN, Double.POSITIVE_INFINITY}) {
            ServerErrorException e = assertThrows(ServerErrorException.class,
                    () -> client.subscribe(new int[] {i("level")}, SubscribeOptions.defaults().withDeadband(bad)));
            assertEquals("EINVAL", e.errno(), "deadband " + bad);
        }
        assertEquals("ENOENT", assertThrows(ParambusException.class,
                () -> client.subscribePrefix("no.such", SubscribeOptions.defaults())).errno());
        // pbusd's max_subscriptions per client (64): one more is EMFILE, the connection stays.
        try (PbusClient own = pbusd.client()) {
            List<Subscription> subs = new ArrayList<>();
            for (int k = 0; k < own.serverInfo().maxSubscriptions(); k++) {
                subs.add(own.subscribe(new int[] {i("trim")}, SubscribeOptions.defaults()));
            }
            ServerErrorException full = assertThrows(ServerErrorException.class,
                    () -> own.subscribe(new int[] {i("trim")}, SubscribeOptions.defaults()));
            assertEquals("EMFILE", full.errno());
            subs.get(0).close();
            own.subscribe(new int[] {i("trim")}, SubscribeOptions.defaults()).close();
            assertTrue(own.isConnected());
        }
    }

    @Test
    void manyThreadsShareOneConnection() throws Exception {
        client.batch().setLong("averaging", 33).setInt("offset_counts", 44).commit();
        try (ExecutorService platform = Executors.newFixedThreadPool(8);
                ExecutorService virtual = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < 64; t++) {
                ExecutorService ex = t % 2 == 0 ? platform : virtual;
                int salt = t;
                results.add(ex.submit(() -> {
                    int ok = 0;
                    for (int k = 0; k < 50; k++) {
                        if ((k + salt) % 3 == 0) {
                            List<Value> v = client.getMany(i("offset_counts"), i("averaging"));
                            ok += v.get(0).asInt() == 44 && v.get(1).asInt() == 33 ? 1 : 0;
                        } else {
                            ok += client.get(i("averaging")).asInt() == 33 ? 1 : 0;
                        }
                    }
                    return ok;
                }));
            }
            for (Future<Integer> f : results) {
                assertEquals(50, f.get(30, TimeUnit.SECONDS), "every reply answered its own request");
            }
        }
    }

    @Test
    void aRequestTimesOutAndTheLateReplyIsDropped() throws Exception {
        try (PbusClient quick = PbusClient.connect(pbusd.instance, pbusd.options().withTimeout(Duration.ofMillis(300)))) {
            signal("STOP");
            long t0 = System.nanoTime();
            RequestTimeoutException e;
            try {
                e = assertThrows(RequestTimeoutException.class, () -> quick.get("temperature"));
            } finally {
                signal("CONT");
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals("ETIMEDOUT", e.errno());
            assertTrue(ms >= 250 && ms < 3000, "timed out after " + ms + " ms");
            assertTrue(e.getMessage().contains("temperature"), e.getMessage());
            // The late VALUES of temperature must not answer this GET of mode.
            assertEquals("SN-0001", quick.get("identity.serial").asString());
            assertEquals(25.5, quick.get("temperature").asDouble());
            assertTrue(quick.isConnected());
        }
    }

    /** Sends pbusd a signal; after STOP, waits until the kernel reports it stopped (state T). */
    private static void signal(String sig) throws Exception {
        Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pbusd.pid())).start();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, "kill -" + sig);
        long deadline = System.nanoTime() + Pbusd.WAIT.toNanos();
        Path stat = Path.of("/proc/" + pbusd.pid() + "/stat");
        while (sig.equals("STOP")) {
            String s = Files.readString(stat);
            if (s.substring(s.lastIndexOf(')') + 2).startsWith("T")) {
                return;
            }
            assertTrue(System.nanoTime() < deadline, "pbusd did not stop: " + s);
            Thread.onSpinWait();
        }
    }

    @Test
    void theClosedClientRefusesRequests() {
        PbusClient c = pbusd.client();
        Subscription s = c.subscribe(new int[] {i("trim")}, SubscribeOptions.defaults());
        c.close();
        assertTrue(c.isClosed());
        assertTrue(s.isClosed());
        assertFalse(c.isConnected());
        ConnectionException e = assertThrows(ConnectionException.class, () -> c.get("trim"));
        assertEquals("ENOTCONN", e.errno());
        assertInstanceOf(ConnectionException.class, assertThrows(ConnectionException.class, () -> s.next(Duration.ofMillis(10))));
        c.close();
        assertTrue(c.toString().contains("closed"), c.toString());
    }
}
