package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

/**
 * The client's frame codec ({@link Wire}) against the project's vectors of the socket
 * protocol, tests/vectors/socket-frames.txt (docs/socket-protocol.md): every request of the
 * parameter protocol encodes to exactly the vector's bytes, every reply and notification
 * decodes to exactly its fields, and the typed values of VALUES, NOTIFY and SET mean what
 * the vector says in the schema it names (tests/server/fixtures/server.pbs).
 */
class WireVectorsTest {
    private static final HexFormat HEX = HexFormat.of();

    /** One entry of the vectors file. */
    record Entry(String name, String kind, int type, int id, Map<String, Object> fields, List<Object> typed, byte[] bytes) {
    }

    @SuppressWarnings("unchecked")
    static List<Entry> entries() throws IOException {
        List<Entry> out = new ArrayList<>();
        Map<String, String> cur = new LinkedHashMap<>();
        StringBuilder hex = new StringBuilder();
        List<String> lines = new ArrayList<>(Files.readAllLines(Pbusd.fixture("tests/vectors/socket-frames.txt")));
        lines.add("");
        for (String line : lines) {
            if (line.startsWith("#")) {
                continue;
            }
            if (line.isEmpty()) {
                if (!cur.isEmpty()) {
                    String[] type = cur.get("type").split(" ");
                    Object typed = cur.containsKey("typed") ? MiniJson.parse(cur.get("typed")) : null;
                    out.add(new Entry(cur.get("frame"), cur.get("kind"), Integer.parseInt(type[0]), Integer.parseInt(cur.get("id")),
                            (Map<String, Object>) MiniJson.parse(cur.get("fields")), (List<Object>) typed,
                            HEX.parseHex(hex.toString().replace(" ", ""))));
                    cur.clear();
                    hex.setLength(0);
                }
                continue;
            }
            int sp = line.indexOf(' ');
            String key = line.substring(0, sp);
            if (key.equals("hex")) {
                hex.append(line.substring(sp + 1));
            } else {
                cur.put(key, line.substring(sp + 1));
            }
        }
        return out;
    }

    private static long num(Object o) {
        return ((BigDecimal) o).longValue();
    }

    private static long hash(Object o) {
        return Long.parseUnsignedLong(((String) o).substring(2), 16);
    }

    @SuppressWarnings("unchecked")
    private static int[] indexes(Map<String, Object> f) {
        return ((List<Object>) f.get("indexes")).stream().mapToInt(o -> (int) num(o)).toArray();
    }

    private static ByteBuffer buffer(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static byte[] done(ByteBuffer b) {
        byte[] a = new byte[b.position()];
        b.flip().get(a);
        return a;
    }

    /** The request's frame as the client encodes it from the vector's fields. */
    @SuppressWarnings("unchecked")
    private static byte[] encode(Entry e) {
        Map<String, Object> f = e.fields();
        ByteBuffer b = buffer(4096);
        switch (e.type()) {
            case Wire.HELLO -> Wire.hello(b, e.id(), (int) num(f.get("min_version")), (int) num(f.get("max_version")),
                    hash(f.get("schema_hash")), ((String) f.get("client_name")).getBytes(StandardCharsets.UTF_8));
            case Wire.SCHEMA_GET, Wire.STATS_GET -> Wire.empty(b, e.type(), e.id());
            case Wire.GET -> {
                int[] idx = indexes(f);
                Wire.get(b, e.id(), idx);
                if (idx.length == 1) {
                    ByteBuffer one = buffer(64);
                    Wire.getOne(one, e.id(), idx[0]);
                    assertArrayEquals(e.bytes(), done(one), e.name() + ": getOne");
                }
            }
            case Wire.SET -> {
                List<Map<String, Object>> writes = (List<Map<String, Object>>) f.get("writes");
                int[] idx = writes.stream().mapToInt(w -> (int) num(w.get("index"))).toArray();
                byte[][] values = writes.stream().map(w -> HEX.parseHex((String) w.get("value"))).toArray(byte[][]::new);
                assertEquals(e.bytes().length, Wire.setSize(values), e.name() + ": setSize");
                Wire.set(b, e.id(), idx, values);
            }
            case Wire.SUBSCRIBE -> {
                int[] idx = indexes(f);
                assertEquals(e.bytes().length, Wire.subscribeSize(idx.length), e.name() + ": subscribeSize");
                Wire.subscribe(b, e.id(), (int) num(f.get("min_interval_us")), ((BigDecimal) f.get("deadband")).doubleValue(), idx);
            }
            case Wire.UNSUBSCRIBE -> Wire.u32(b, Wire.UNSUBSCRIBE, e.id(), (int) num(f.get("subscription")));
            case Wire.PING -> Wire.bytes(b, Wire.PING, e.id(), HEX.parseHex((String) f.get("data")));
            default -> throw new AssertionError(e.name() + ": no encoder for type " + e.type());
        }
        return done(b);
    }

    /** The vector's value records as {index, status, timestamp_ns, seq, value} maps, decoded by the client. */
    private static List<Map<String, Object>> records(Wire.Body body, int count, Schema schema, List<Value> into) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (int k = 0; k < count; k++) {
            Value v = Wire.value(body, schema);
            into.add(v);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("index", new BigDecimal(v.index()));
            m.put("status", new BigDecimal(v.statusCode()));
            m.put("timestamp_ns", new BigDecimal(Long.toUnsignedString(v.timestampNs())));
            m.put("seq", new BigDecimal(Long.toUnsignedString(v.version())));
            m.put("value", HEX.formatHex(v.bytes()));
            out.add(m);
        }
        return out;
    }

    /** The reply's or notification's fields as the client decodes them from the vector's bytes. */
    private static Map<String, Object> decode(Entry e, Schema schema, List<Value> values) {
        ByteBuffer buf = ByteBuffer.wrap(e.bytes()).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(e.bytes().length, buf.getInt(0), e.name() + ": length");
        assertEquals(e.type(), buf.getShort(4), e.name() + ": type");
        assertEquals(0, buf.getShort(6), e.name() + ": flags");
        assertEquals(e.id(), buf.getInt(8), e.name() + ": id");
        Wire.Body body = new Wire.Body(buf, Wire.HEADER, e.bytes().length);
        Map<String, Object> m = new LinkedHashMap<>();
        switch (e.type()) {
            case Wire.HELLO_REPLY -> {
                Wire.HelloReply h = Wire.helloReply(body);
                m.put("version", new BigDecimal(h.version()));
                m.put("schema_hash", String.format("0x%016x", h.schemaHash()));
                m.put("param_count", new BigDecimal(h.paramCount()));
                m.put("max_frame", new BigDecimal(h.maxFrame()));
                m.put("max_subscriptions", new BigDecimal(h.maxSubscriptions()));
                m.put("server_pid", new BigDecimal(h.serverPid()));
                m.put("instance", h.instance());
                m.put("interface", h.interfaceName());
            }
            case Wire.SCHEMA, Wire.STATS -> m.put(e.type() == Wire.SCHEMA ? "text" : "json", body.str());
            case Wire.VALUES -> m.put("values", records(body, body.u32(), schema, values));
            case Wire.NOTIFY -> {
                m.put("subscription", new BigDecimal(body.u32()));
                m.put("values", records(body, body.u32(), schema, values));
            }
            case Wire.SET_REPLY -> {
                Wire.SetReply r = Wire.setReply(body);
                m.put("result", new BigDecimal(r.result()));
                List<Object> results = new ArrayList<>();
                for (int k = 0; k < r.results().length; k++) {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("result", new BigDecimal(r.results()[k]));
                    x.put("seq", new BigDecimal(r.seqs()[k]));
                    results.add(x);
                }
                m.put("results", results);
            }
            case Wire.SUBSCRIBED -> m.put("subscription", new BigDecimal(body.u32()));
            case Wire.UNSUBSCRIBED -> { }
            case Wire.ERROR -> {
                Wire.ErrorReply r = Wire.error(body);
                m.put("code", new BigDecimal(r.code()));
                m.put("message", r.message());
            }
            case Wire.PONG -> m.put("data", HEX.formatHex(body.bytes(body.left())));
            default -> throw new AssertionError(e.name() + ": no decoder for type " + e.type());
        }
        assertTrue(body.done(), e.name() + ": the body was not read exactly");
        return m;
    }

    /** A typed JSON value as the text {@link ParamInfo#parse} takes. */
    @SuppressWarnings("unchecked")
    private static String text(Object v) {
        if (v instanceof List<?> l) {
            return l.stream().map(WireVectorsTest::text).collect(Collectors.joining(","));
        }
        if (v instanceof BigDecimal d) {
            return d.toPlainString();
        }
        return String.valueOf(v);
    }

    /** What a decoded value holds, compared with the typed JSON value. */
    private static void checkTyped(String what, Value v, Object expected) {
        switch (v.type()) {
            case DOUBLE -> assertEquals(((BigDecimal) expected).doubleValue(), v.asDouble(), what);
            case BOOL -> assertEquals(expected, v.asBoolean(), what);
            case STRING -> assertEquals(expected, v.asString(), what);
            case INT32_ARRAY -> assertArrayEquals(((List<?>) expected).stream().mapToInt(o -> ((BigDecimal) o).intValue()).toArray(),
                    v.asIntArray(), what);
            default -> throw new AssertionError(what + ": no check for " + v.type());
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyParameterFrameEncodesAndDecodesAsTheVectorSays() throws IOException {
        Schema schema = Schema.parse(Files.readAllBytes(Pbusd.fixture("tests/server/fixtures/server.pbs")));
        List<Entry> entries = entries();
        int requests = 0;
        int replies = 0;
        for (Entry e : entries) {
            if (e.type() > Wire.PONG) {
                continue; // the services' messages: not this client's
            }
            if (e.kind().equals("request")) {
                assertEquals(HEX.formatHex(e.bytes()), HEX.formatHex(encode(e)), e.name());
                requests++;
                if (e.typed() != null) {
                    List<Map<String, Object>> writes = (List<Map<String, Object>>) e.fields().get("writes");
                    WriteBatch batch = new WriteBatch(null, schema, "vectors");
                    for (int k = 0; k < e.typed().size(); k++) {
                        Map<String, Object> t = (Map<String, Object>) e.typed().get(k);
                        int index = (int) num(t.get("index"));
                        assertEquals(t.get("type"), schema.param(index).type().spelling(), e.name() + ": the vector's type");
                        Object v = t.get("value");
                        switch (schema.param(index).type()) {
                            case DOUBLE -> batch.setDouble(index, ((BigDecimal) v).doubleValue());
                            case BOOL -> batch.setBoolean(index, (Boolean) v);
                            case STRING -> batch.setString(index, (String) v);
                            case INT32_ARRAY -> batch.setIntArray(index, ((List<?>) v).stream()
                                    .mapToInt(o -> ((BigDecimal) o).intValue()).toArray());
                            default -> throw new AssertionError(e.name() + ": no setter for " + t.get("type"));
                        }
                        assertEquals(index, batch.indexAt(k));
                        assertEquals(writes.get(k).get("value"), HEX.formatHex(batch.valueAt(k)),
                                e.name() + ": " + schema.param(index).name() + " encoded from " + v);
                        if (e.name().equals("set")) {
                            // Text as pbus set takes it means the same bytes (checked against the limits too).
                            assertEquals(writes.get(k).get("value"), HEX.formatHex(schema.param(index).parse(text(v))));
                        }
                    }
                }
            } else {
                List<Value> values = new ArrayList<>();
                assertEquals(e.fields(), decode(e, schema, values), e.name());
                replies++;
                if (e.typed() != null) {
                    for (int k = 0; k < e.typed().size(); k++) {
                        Map<String, Object> t = (Map<String, Object>) e.typed().get(k);
                        assertEquals(t.get("type"), values.get(k).type().spelling(), e.name() + ": type");
                        checkTyped(e.name() + ": " + values.get(k).name(), values.get(k), t.get("value"));
                    }
                }
                if (e.type() == Wire.SCHEMA) {
                    Schema s = Schema.parse((String) e.fields().get("text"));
                    assertEquals("com.example.psu.PowerSupply", s.interfaceName());
                    assertEquals(1, s.paramCount());
                }
            }
        }
        assertTrue(requests >= 10 && replies >= 12, "requests " + requests + ", replies " + replies + " in the vectors");
    }

    @Test
    void malformedBodiesAreProtocolErrors() {
        ByteBuffer b = buffer(64);
        b.putInt(-22).putInt(10).put("abc".getBytes(StandardCharsets.UTF_8));
        ProtocolErrorException e = org.junit.jupiter.api.Assertions.assertThrows(ProtocolErrorException.class,
                () -> Wire.error(new Wire.Body(b, 0, b.position())));
        assertEquals("EPROTO", e.errno());
        ByteBuffer positive = buffer(64);
        positive.putInt(5).putInt(0);
        org.junit.jupiter.api.Assertions.assertThrows(ProtocolErrorException.class,
                () -> Wire.error(new Wire.Body(positive, 0, positive.position())));
        ByteBuffer shortReply = buffer(64);
        shortReply.putInt(0).putInt(2).putInt(0).putLong(1);
        org.junit.jupiter.api.Assertions.assertThrows(ProtocolErrorException.class,
                () -> Wire.setReply(new Wire.Body(shortReply, 0, shortReply.position())));
    }
}
