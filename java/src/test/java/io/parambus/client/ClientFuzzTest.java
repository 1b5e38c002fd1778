package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.parambus.fuzz.Vectors;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fuzz target {@code java-client} (tests/fuzz/run): the whole socket client facing a
 * hostile server — its frame reader (lengths, types, flags, ids, frames split and
 * joined in any way), the matching of replies to pipelined requests, every reply's
 * decoder, notifications and the refusals it builds from replies — as
 * tests/fuzz/fuzz-client.c does for the C client. A thread of this JVM stands in for
 * pbusd on a real Unix-domain socket: it answers HELLO and SCHEMA_GET honestly, then
 * answers each further request with the input's next frames up to the first that is
 * not a notification, and shuts its side down when the input is spent. The client, connected through
 * {@link PbusClient#connect} with reconnects off, makes one request of each kind — ids
 * 3 to 9: SUBSCRIBE, GET of three parameters, SET, STATS_GET, PING, GET of one, and
 * UNSUBSCRIBE — and takes the subscription's notifications.
 *
 * <p>Checked: every call returns or throws one of the client's documented exceptions
 * ({@link ConnectionException}, {@link ServerErrorException} with a negative code,
 * {@link ProtocolErrorException}) — never another exception, and never a
 * {@link RequestTimeoutException}: the server's end of input must end every wait. What a
 * call returns answers it: values of the parameters asked, in order; a notification's
 * values of the subscription's parameters; a SET refused names the write it blames. The
 * client and its threads are gone after {@link PbusClient#close()}.
 *
 * <p>Seeds: honest answers to the requests, with notifications, errors and refusals
 * between them (built here, as tests/fuzz/run builds fuzz-client's).
 */
class ClientFuzzTest {
    private static final String INSTANCE = "jfuzzc" + ProcessHandle.current().pid();
    private static final byte[] SCHEMA_TEXT = ("pbus-schema 1\n"
            + "interface fuzz.Client 1.0\n"
            + "enum fuzz.Client.Mode OFF=0 ON=1\n"
            + "param vset double unit=V min=0 max=30 default=1\n"
            + "param name string size=16 default=abc\n"
            + "param mode enum enum=fuzz.Client.Mode default=OFF\n"
            + "param arr int16[] count=4 default=1,2\n").getBytes(StandardCharsets.UTF_8);
    private static final long HASH = Schema.hash(SCHEMA_TEXT);

    private static Path dir;
    private static ServerSocketChannel listener;

    private static synchronized ServerSocketChannel listener() throws IOException {
        if (listener == null) {
            dir = Files.createTempDirectory("pbus-jfuzz-client-");
            listener = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            listener.bind(UnixDomainSocketAddress.of(dir.resolve(INSTANCE + ".sock")));
            // Also when the test's own cleanup never runs (a fuzzing run ends by exiting).
            Runtime.getRuntime().addShutdownHook(new Thread(ClientFuzzTest::removeSocket));
        }
        return listener;
    }

    @AfterAll
    static synchronized void removeSocket() {
        if (listener != null) {
            try {
                listener.close();
                try (Stream<Path> s = Files.walk(dir)) {
                    for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                        Files.deleteIfExists(p);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            listener = null;
        }
    }

    // ---- Frames, for the stand-in and the seeds ---------------------------------------------------------------

    static byte[] frame(int type, int id, byte[] body) {
        return ByteBuffer.allocate(12 + body.length).order(ByteOrder.LITTLE_ENDIAN).putInt(12 + body.length)
                .putShort((short) type).putShort((short) 0).putInt(id).put(body).array();
    }

    private static ByteBuffer le(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static byte[] str(byte[] b) {
        return le(4 + b.length).putInt(b.length).put(b).array();
    }

    private static byte[] value(int index, byte[] data, long seq) {
        return le(28 + data.length).putInt(index).putInt(0).putLong(1700000000000000000L).putLong(seq)
                .putInt(data.length).put(data).array();
    }

    private static byte[] cat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    /** Every request answered as pbusd would, with notifications between: everything must succeed. */
    private static final byte[] HONEST = honest();

    private static byte[] honest() {
        byte[] dbl = le(8).putDouble(2.5).array();
        byte[] text = "abc".getBytes(StandardCharsets.UTF_8);
        return cat(frame(Wire.SUBSCRIBED, 3, le(4).putInt(1).array()),
                frame(Wire.NOTIFY, 0, cat(le(8).putInt(1).putInt(2).array(), value(0, dbl, 1), value(1, text, 1))),
                frame(Wire.VALUES, 4, cat(le(4).putInt(3).array(), value(0, dbl, 1), value(1, text, 1),
                        value(3, new byte[] {1, 0, 2, 0}, 2))),
                frame(Wire.SET_REPLY, 5, le(20).putInt(0).putInt(1).putInt(0).putLong(2).array()),
                frame(Wire.STATS, 6, str("{}".getBytes(StandardCharsets.UTF_8))),
                frame(Wire.PONG, 7, "ping".getBytes(StandardCharsets.UTF_8)),
                frame(Wire.NOTIFY, 0, cat(le(8).putInt(1).putInt(1).array(), value(0, le(8).putDouble(3).array(), 2))),
                frame(Wire.VALUES, 8, cat(le(4).putInt(1).array(), value(1, "x".getBytes(StandardCharsets.UTF_8), 3))),
                frame(Wire.UNSUBSCRIBED, 9, new byte[0]));
    }

    static Stream<Arguments> seeds() {
        byte[] dbl = le(8).putDouble(2.5).array();
        byte[] subscribed = frame(Wire.SUBSCRIBED, 3, le(4).putInt(1).array());
        byte[] notify = frame(Wire.NOTIFY, 0, cat(le(8).putInt(1).putInt(2).array(), value(0, dbl, 1),
                value(1, "abc".getBytes(StandardCharsets.UTF_8), 1)));
        byte[] values = frame(Wire.VALUES, 4, cat(le(4).putInt(3).array(), value(0, dbl, 1),
                value(1, "abc".getBytes(StandardCharsets.UTF_8), 1), value(3, new byte[] {1, 0, 2, 0}, 2)));
        byte[] stats = frame(Wire.STATS, 6, str("{}".getBytes(StandardCharsets.UTF_8)));
        byte[] pong = frame(Wire.PONG, 7, "ping".getBytes(StandardCharsets.UTF_8));
        byte[] one = frame(Wire.VALUES, 8, cat(le(4).putInt(1).array(), value(1, "x".getBytes(StandardCharsets.UTF_8), 3)));
        byte[] error = frame(Wire.ERROR, 4, cat(le(4).putInt(-2).array(), str("no such 9".getBytes(StandardCharsets.UTF_8))));
        List<byte[]> seeds = new ArrayList<>();
        seeds.add(HONEST);
        seeds.add(cat(notify, subscribed, notify, notify));
        seeds.add(cat(subscribed, error, frame(Wire.ERROR, 5, cat(le(4).putInt(-16).array(),
                str("busy".getBytes(StandardCharsets.UTF_8))))));
        seeds.add(cat(subscribed, values, frame(Wire.SET_REPLY, 5, le(20).putInt(-16).putInt(1).putInt(-16).putLong(0).array())));
        seeds.add(cat(subscribed, values, frame(Wire.SET_REPLY, 5, le(20).putInt(-34).putInt(1).putInt(-34).putLong(0).array()),
                stats, pong, one));
        seeds.add(cat(frame(Wire.ERROR, 0, cat(le(4).putInt(-87).array(), str("too many clients".getBytes(StandardCharsets.UTF_8))))));
        seeds.add(new byte[0]);
        return Vectors.arguments(seeds);
    }

    // ---- The stand-in for pbusd ------------------------------------------------------------------------------------

    /** One whole frame from {@code ch} (blocking): its type and id, or null at the end. */
    private static int[] readFrame(SocketChannel ch) throws IOException {
        ByteBuffer head = le(12);
        while (head.hasRemaining()) {
            if (ch.read(head) < 0) {
                return null;
            }
        }
        int left = head.getInt(0) - 12;
        ByteBuffer skip = ByteBuffer.allocate(Math.max(0, left));
        while (skip.hasRemaining()) {
            if (ch.read(skip) < 0) {
                return null;
            }
        }
        return new int[] {Short.toUnsignedInt(head.getShort(4)), head.getInt(8)};
    }

    private static void writeAll(SocketChannel ch, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(data);
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /**
     * An honest handshake, then the input as answers: after each request the client
     * sends, the input's next frames up to the first that is not a notification (the
     * reply, in the stand-in's mind; a frame whose length runs past the input, and
     * whatever follows it, go out whole); once the input is spent, the end of input.
     * Then it reads until the client goes.
     */
    private static void serve(SocketChannel ch, byte[] input) {
        try (ch) {
            int[] f = readFrame(ch);
            if (f != null && f[0] == Wire.HELLO) {
                byte[] inst = INSTANCE.getBytes(StandardCharsets.UTF_8);
                byte[] iface = "fuzz.Client".getBytes(StandardCharsets.UTF_8);
                writeAll(ch, frame(Wire.HELLO_REPLY, f[1], le(28 + 8 + inst.length + iface.length).putInt(1).putLong(HASH)
                        .putInt(4).putInt(65536).putInt(4).putInt(1).put(str(inst)).put(str(iface)).array()));
                f = readFrame(ch);
                if (f != null && f[0] == Wire.SCHEMA_GET) {
                    writeAll(ch, frame(Wire.SCHEMA, f[1], str(SCHEMA_TEXT)));
                }
            }
            ByteBuffer in = ByteBuffer.wrap(input).order(ByteOrder.LITTLE_ENDIAN);
            int pos = 0;
            while (pos < input.length && readFrame(ch) != null) {
                for (;;) {
                    int left = input.length - pos;
                    long length = left >= 12 ? Integer.toUnsignedLong(in.getInt(pos)) : 0;
                    if (length < 12 || length > left) {
                        writeAll(ch, java.util.Arrays.copyOfRange(input, pos, input.length));
                        pos = input.length;
                        break;
                    }
                    int type = Short.toUnsignedInt(in.getShort(pos + 4));
                    int id = in.getInt(pos + 8);
                    writeAll(ch, java.util.Arrays.copyOfRange(input, pos, pos + (int) length));
                    pos += (int) length;
                    boolean notification = type == Wire.NOTIFY || type == Wire.SERVICE && id == 0;
                    if (!notification || pos == input.length) {
                        break;
                    }
                }
            }
            ch.shutdownOutput();
            ByteBuffer sink = ByteBuffer.allocate(4096);
            while (ch.read(sink) >= 0) {
                sink.clear();
            }
        } catch (IOException e) {
            // The client closed its end first: what the stand-in had to say is said.
        }
    }

    // ---- The client ---------------------------------------------------------------------------------------------------

    /** Whether the input is {@link #HONEST}, whose every call must succeed (the stand-in itself is checked so). */
    private static boolean strict;

    /** A call's result, or null if it failed as the client documents. */
    private static <T> T call(String what, Callable<T> c) {
        try {
            return c.call();
        } catch (Exception e) {
            if (strict) {
                throw new AssertionError(what + " failed on honest answers: " + e, e);
            }
            return failed(what, e);
        }
    }

    private static <T> T failed(String what, Exception ex) {
        try {
            throw ex;
        } catch (RequestTimeoutException e) {
            throw new AssertionError(what + ": a timeout although the server had closed its side: " + e.getMessage(), e);
        } catch (ServerErrorException e) {
            assertTrue(e.code() < 0, what + ": a server error of code " + e.code());
            if (e instanceof SetRefusedException r) {
                assertTrue(r.refusedPosition() >= -1 && r.refusedPosition() < r.results().length,
                        what + ": refused position " + r.refusedPosition());
            }
            return null;
        } catch (ConnectionException | ProtocolErrorException e) {
            assertFalse(e.getMessage().contains("\n"), what + ": a message of more than one line: " + e.getMessage());
            return null;
        } catch (Exception e) {
            throw new AssertionError(what + ": " + e, e);
        }
    }

    @MethodSource("seeds")
    @FuzzTest
    @Timeout(30)
    void hostileServer(byte[] input) throws Exception {
        strict = java.util.Arrays.equals(input, HONEST);
        ServerSocketChannel l = listener();
        Thread server = Thread.ofPlatform().name("jfuzz-pbusd").start(() -> {
            try {
                serve(l.accept(), input);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        List<Thread> dispatchers = new ArrayList<>();
        ClientOptions options = ClientOptions.defaults().withSocketDir(dir).withName("fuzz")
                .withTimeout(Duration.ofSeconds(5)).withReconnect(false).withDispatcherFactory(r -> {
                    Thread t = Thread.ofPlatform().daemon().name("jfuzz-dispatcher").unstarted(r);
                    synchronized (dispatchers) {
                        dispatchers.add(t);
                    }
                    return t;
                });
        PbusClient c = call("connect", () -> PbusClient.connect(INSTANCE, options));
        if (c != null) {
            try {
                exercise(c);
            } finally {
                c.close();
            }
            synchronized (dispatchers) {
                for (Thread t : dispatchers) {
                    t.join(5_000);
                    assertFalse(t.isAlive(), "the dispatcher thread outlived close()");
                }
            }
        }
        server.join(10_000);
        assertFalse(server.isAlive(), "the stand-in still waits for the client to close its socket");
    }

    private static void exercise(PbusClient c) throws InterruptedException {
        Subscription sub = call("subscribe", () -> c.subscribe(new int[] {0, 1}, SubscribeOptions.defaults()));
        List<Value> many = call("get 0,1,3", () -> c.getMany(0, 1, 3));
        if (many != null) {
            assertEquals(List.of(0, 1, 3), many.stream().map(Value::index).toList(), "get answered other parameters");
        }
        call("set", () -> c.batch().setDouble(0, 2.5).commit());
        call("stats", c::stats);
        call("ping", () -> {
            c.ping("ping".getBytes(StandardCharsets.UTF_8));
            return null;
        });
        Value one = call("get 1", () -> c.get(1));
        if (one != null) {
            assertEquals(1, one.index(), "get answered another parameter");
            assertTrue(one.length() <= one.param().valueSize());
        }
        if (sub != null) {
            int notified = 0;
            for (int k = 0; k < 3; k++) {
                List<Value> got = call("next", () -> sub.next(Duration.ZERO));
                if (got == null) {
                    break;
                }
                for (Value v : got) {
                    assertTrue(v.index() == 0 || v.index() == 1, "a notification of parameter " + v.index());
                }
                notified += got.size();
            }
            assertTrue(!strict || notified == 2, "honest notifications of both parameters: " + notified);
            call("unsubscribe", () -> {
                sub.close();
                return null;
            });
        }
    }
}
