package io.parambus.client;

import io.parambus.ParambusException;

import java.io.IOException;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A client of pbusd, the parameter server, over its Unix-domain socket
 * (docs/socket-protocol.md), in pure Java: no native code of parambus's own, so a program
 * on another machine's JVM — or one that must not map the table — reads, writes and
 * subscribes to an instance's parameters through this class alone.
 *
 * <pre>{@code
 * try (PbusClient psu = PbusClient.connect("psu")) {
 *     double v = psu.get("voltage_setpoint").asDouble();
 *     psu.batch().setDouble("voltage_setpoint", 12.0).setEnum("output", "ON").commit();
 *     try (Subscription s = psu.subscribe(new int[] {psu.schema().find("measured_voltage")},
 *             SubscribeOptions.defaults().withDeadband(0.01).withMaxRate(10),
 *             (sub, values) -> System.out.println(values))) {
 *         ...
 *     }
 * }
 * }</pre>
 *
 * <p><b>Requests</b> ({@link #get}, {@link #getMany}, {@link WriteBatch#commit},
 * {@link #subscribe}, {@link #stats}, {@link #ping}) block until pbusd answers, at most
 * the {@linkplain ClientOptions#withTimeout timeout}. Any number of threads may make them
 * at once; they are pipelined on the one connection. A single-parameter {@link #get(int)}
 * is the lean path: one 20-byte write, one wait and one read, on the calling thread itself
 * when no other thread is reading.
 *
 * <p><b>Threads.</b> While the client has subscriptions or connection listeners, it runs
 * one <em>dispatcher</em> thread (a platform daemon thread unless
 * {@link ClientOptions#withDispatcherFactory} says otherwise): it reads notifications,
 * runs every callback of the client — one at a time, in order — and reconnects. Without
 * them the client has no thread of its own. Blocking calls are made for virtual threads:
 * the client waits with {@link java.util.concurrent.locks.LockSupport} and
 * {@link ReentrantLock} conditions, never in a monitor around I/O, and reads through a
 * non-blocking channel and a selector, so a waiting virtual thread unmounts (on JDK 24
 * and later, where the JDK's selector parks virtual threads through its poller; the
 * project's tests check with JFR that 1,000 waiting virtual threads record no
 * {@code jdk.VirtualThreadPinned} event).
 *
 * <p><b>Reconnecting.</b> When the connection is lost (pbusd restarted), the dispatcher
 * reconnects after {@linkplain ClientOptions#withReconnectDelay 1 s}, then after twice as
 * long after each failed attempt (up to 30 s), checks that pbusd serves the same schema
 * (the hash of the first connection: another schema ends the client's reconnecting,
 * {@code ESTALE}), and subscribes every subscription again: listeners see
 * {@code onDisconnected}, {@code onResubscribed} and fresh values. A request made while
 * disconnected does not wait for that schedule: it tries one connection at once and, if
 * that fails, fails fast with {@link ConnectionException} {@code ENOTCONN}. A request whose
 * connection is lost after it was sent fails with {@link ConnectionException}
 * {@code ECONNRESET} (it may have been applied); one that never reached the server is sent
 * again once on a new connection.
 *
 * <p><b>Errors</b> are {@link ParambusException}s: {@link ServerErrorException} (pbusd's
 * refusal with its code and message), {@link SetRefusedException}, {@link ConnectionException}
 * and {@link UntrustedServerException}, {@link RequestTimeoutException},
 * {@link ProtocolErrorException}; argument errors found before sending are plain
 * {@code ParambusException}s with {@code ENOENT} (no such name), {@code EINVAL} or
 * {@code ERANGE}.
 *
 * <p>Thread-safe: every method may be called from any thread, callbacks included
 * ({@link #close()} from a callback does not wait for the dispatcher to end).
 */
public final class PbusClient implements AutoCloseable {
    private final String instance;
    private final ClientOptions options;
    private final List<UserPrincipal> trusted;
    private final byte[] nameBytes;
    private final long timeoutNanos;
    private volatile Schema schema;

    /** The client's state: never held during I/O or a callback. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ReentrantLock connectLock = new ReentrantLock();
    private volatile Connection current;
    private final Map<Integer, Subscription> subscriptions = new LinkedHashMap<>(); // under lock
    private final List<ConnectionListener> listeners = new CopyOnWriteArrayList<>();
    private int nextSubscriptionId; // under lock
    private volatile boolean closed;
    private volatile boolean wantsReader;
    private ParambusException fatal; // under lock
    private long backoffNanos; // under lock
    private long reconnectAt; // under lock; System.nanoTime(), valid if reconnectPending
    private boolean reconnectPending; // under lock
    private Thread dispatcher; // under lock
    private volatile Wire.HelloReply lastHello; // of the last connection made

    private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();

    /** What the dispatcher delivers. */
    private record Event(Kind kind, Subscription subscription, List<Value> values, ParambusException error,
            ConnectionListener.State state) {
    }

    private enum Kind { VALUES, DISCONNECTED, RESUBSCRIBED, RESUBSCRIBE_FAILED, CONNECTION }

    private PbusClient(String instance, ClientOptions options) {
        this.instance = instance;
        this.options = options;
        this.trusted = SocketAccess.trustedOwners(options.trustedOwners());
        this.nameBytes = options.name().getBytes(StandardCharsets.UTF_8);
        this.timeoutNanos = options.timeout().toNanos();
        this.backoffNanos = options.reconnectDelay().toNanos();
    }

    /**
     * Connects to instance {@code instance}'s pbusd with the default options.
     *
     * @see #connect(String, ClientOptions)
     */
    public static PbusClient connect(String instance) {
        return connect(instance, ClientOptions.defaults());
    }

    /**
     * Connects to instance {@code instance}'s pbusd: finds its socket, checks that a
     * trusted owner serves it (before sending anything), shakes hands and fetches the
     * schema. Blocks up to the options' timeout.
     *
     * @throws ParambusException {@code EINVAL} for an invalid instance name
     * @throws ConnectionException {@code ENOENT} (no socket: is pbusd running?),
     *         {@code ECONNREFUSED}, {@code EACCES}
     * @throws UntrustedServerException the socket is served by a user who is not trusted ({@code EPERM})
     * @throws ServerErrorException {@code ESTALE} (another schema than
     *         {@link ClientOptions#withSchemaHash}), {@code EUSERS} (too many clients),
     *         {@code EPROTONOSUPPORT}
     * @throws RequestTimeoutException pbusd did not answer in time
     * @throws ProtocolErrorException pbusd's answer or schema is malformed
     */
    public static PbusClient connect(String instance, ClientOptions options) {
        if (!SocketAccess.instanceNameValid(instance)) {
            throw new ParambusException("EINVAL", "connect '" + instance + "': not an instance name (1 to 48 letters, digits, "
                    + "'_', '-', '.', not starting with '.' or '-') (EINVAL)");
        }
        PbusClient c = new PbusClient(instance, options);
        c.connectLock.lock();
        try {
            c.connectNow(System.nanoTime() + c.timeoutNanos, true);
        } finally {
            c.connectLock.unlock();
        }
        return c;
    }

    /** The instance's name. */
    public String instance() {
        return instance;
    }

    /** The options the client was made with. */
    public ClientOptions options() {
        return options;
    }

    /** The instance's schema, as pbusd sent it at the first connect (reconnects check it is the same). */
    public Schema schema() {
        return schema;
    }

    Schema schemaOrNull() {
        return schema;
    }

    Connection currentConnection() {
        return current;
    }

    /** Whether the client is connected now. */
    public boolean isConnected() {
        Connection c = current;
        return c != null && !c.isDead();
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * What pbusd said at the handshake of the current connection (or of the last one,
     * while disconnected): its pid, max_frame, max_subscriptions, instance and interface.
     */
    public ServerInfo serverInfo() {
        Connection c = current;
        Wire.HelloReply h = c != null ? c.hello() : lastHello;
        return new ServerInfo(h.version(), h.schemaHash(), h.paramCount(), h.maxFrame(), h.maxSubscriptions(), h.serverPid(),
                h.instance(), h.interfaceName());
    }

    /** What pbusd tells at a handshake (HELLO_REPLY, docs/socket-protocol.md §3). */
    public record ServerInfo(int version, long schemaHash, int paramCount, int maxFrame, int maxSubscriptions, int pid,
            String instance, String interfaceName) {
    }

    // ---- Requests ----------------------------------------------------------------------------------------------

    /**
     * Reads one parameter: its value, status, time and version, as pbusd reads the table
     * now. The lean path (one write of 20 bytes, one read; the reply is decoded straight
     * from the input buffer into the returned {@link Value}).
     *
     * @throws ServerErrorException {@code ENOENT} (no parameter of that index), {@code EACCES} ({@code noread})
     * @throws ConnectionException as every request (no connection, or lost before the reply)
     * @throws RequestTimeoutException as every request (no reply in time)
     * @throws ProtocolErrorException as every request (a malformed reply)
     */
    public Value get(int index) {
        Requests.GetOne p = new Requests.GetOne(index);
        transact(p, true);
        return p.result;
    }

    /**
     * Reads parameter {@code name}.
     *
     * @throws ParambusException {@code ENOENT} naming it if the schema has no such parameter
     * @see #get(int)
     */
    public Value get(String name) {
        return get(indexOf("get", name));
    }

    /**
     * Reads several parameters in one request, each consistent on its own, in the order
     * given (an index may appear more than once).
     *
     * @throws ParambusException {@code EINVAL} if none or more than the schema's parameters are asked for
     * @throws ServerErrorException {@code ENOENT} / {@code EACCES} naming the first offender (then nothing is read),
     *         {@code EMSGSIZE} if the reply would be above max_frame
     */
    public List<Value> getMany(int... indexes) {
        if (indexes.length == 0 || indexes.length > schema.paramCount()) {
            throw new ParambusException("EINVAL", "get " + instance + ": " + indexes.length + " parameters (1 to "
                    + schema.paramCount() + " at a time) (EINVAL)");
        }
        Requests.GetMany p = new Requests.GetMany(indexes.clone());
        transact(p, true);
        return Collections.unmodifiableList(Arrays.asList(p.result));
    }

    /**
     * Reads several parameters by name.
     *
     * @throws ParambusException {@code ENOENT} naming the first name the schema does not have
     * @see #getMany(int...)
     */
    public List<Value> getMany(String... names) {
        int[] indexes = new int[names.length];
        for (int k = 0; k < names.length; k++) {
            indexes[k] = indexOf("get", names[k]);
        }
        return getMany(indexes);
    }

    /** A new, empty batch of writes for {@link WriteBatch#commit()}. */
    public WriteBatch batch() {
        return new WriteBatch(this);
    }

    long[] commit(int[] indexes, byte[][] values) {
        Requests.Set p = new Requests.Set(indexes, values);
        transact(p, true);
        Wire.SetReply r = p.result;
        if (r.result() == 0) {
            return r.seqs();
        }
        throw refusal(indexes, values, r);
    }

    private SetRefusedException refusal(int[] indexes, byte[][] values, Wire.SetReply r) {
        int k = 0;
        while (k < indexes.length && r.results()[k] == 0) {
            k++;
        }
        if (k == indexes.length) {
            k = -1;
        }
        int code = k >= 0 ? r.results()[k] : r.result();
        ParamInfo p = k >= 0 && indexes[k] >= 0 && indexes[k] < schema.paramCount() ? schema.params().get(indexes[k]) : null;
        String who = k < 0 ? "the batch" : p != null ? p.name() : "parameter " + Integer.toUnsignedString(indexes[k]);
        String value = k < 0 || p == null ? "" : " = " + shortText(p, values[k]);
        String reason = reason(code, p, k >= 0 ? indexes : null, k, k >= 0 ? values[k] : null);
        String message = "set " + instance + ": " + who + value + ": " + reason + " (" + Errno.name(code) + "); nothing was written";
        return new SetRefusedException(code, message, reason, r.results(), k, p);
    }

    private static String shortText(ParamInfo p, byte[] v) {
        String t = ValueCodec.format(p, v, 0, v.length);
        return t.length() > 60 ? t.substring(0, 57) + "..." : t;
    }

    private String reason(int code, ParamInfo p, int[] indexes, int k, byte[] value) {
        return switch (-code) {
            case Errno.ENOENT -> "no such parameter (the instance has " + schema.paramCount() + ")";
            case Errno.EACCES -> "read-only (only the instrument's provider writes it)";
            case Errno.EPERM -> "this user may not write it" + (p != null && !p.group().isEmpty()
                    ? " (its writers: pbusd's user, root and the group " + p.group() + ")" : " (only pbusd's user and root may)");
            case Errno.EMSGSIZE -> value == null ? "too long" // the batch's code, no write blamed
                    : value.length + " bytes, above its capacity of " + (p != null ? p.valueSize() : "?");
            case Errno.EBUSY -> "another writer held it for a second; try again later";
            case Errno.ERANGE -> p != null && p.type().element() == io.parambus.ParamType.ENUM
                    ? "not an enumerator of " + p.enumName() : "outside its limits " + (p != null ? ValueCodec.limitsText(p) : "");
            case Errno.EINVAL -> {
                for (int j = 0; indexes != null && j < k; j++) {
                    if (indexes[j] == indexes[k]) {
                        yield "written twice in one batch";
                    }
                }
                yield value == null ? "not valid" // the batch's code, no write blamed
                        : "not a valid " + (p != null ? p.type().spelling() : "value") + " (" + value.length + " bytes)";
            }
            default -> "refused";
        };
    }

    /**
     * The server's statistics as JSON text (docs/socket-protocol.md §7): one request, one sample.
     *
     * @throws ConnectionException as every request (no connection, or lost before the reply)
     * @throws RequestTimeoutException as every request (no reply in time)
     */
    public String stats() {
        Requests.Simple p = new Requests.Simple(Wire.STATS_GET, null, 0);
        transact(p, true);
        return new String(p.result, StandardCharsets.UTF_8);
    }

    /**
     * A PING with {@code data} and its PONG: the bare round trip.
     *
     * @throws ProtocolErrorException if the PONG does not echo the data
     * @throws ConnectionException as every request (no connection, or lost before the reply)
     * @throws RequestTimeoutException as every request (no reply in time)
     */
    public void ping(byte[] data) {
        Requests.Simple p = new Requests.Simple(Wire.PING, data.clone(), 0);
        transact(p, true);
        if (!Arrays.equals(p.result, data)) {
            throw new ProtocolErrorException("ping " + instance + ": the PONG did not echo the PING's " + data.length
                    + " bytes (EPROTO)");
        }
    }

    private int indexOf(String operation, String name) {
        int i = schema.find(name);
        if (i < 0) {
            throw new ParambusException("ENOENT", operation + " " + instance + ": no parameter '" + name + "' (ENOENT)");
        }
        return i;
    }

    /**
     * Sends {@code p} and waits for its reply (on a new connection if there is none),
     * once more on a new connection if the frame never reached the server.
     */
    private void transact(Pending p, boolean mayResend) {
        long deadline = System.nanoTime() + timeoutNanos;
        for (int attempt = 0;; attempt++) {
            Connection c = ensureConnected(p, deadline);
            try {
                c.send(p, deadline);
            } catch (ConnectionException e) {
                if (!p.sent && attempt == 0 && mayResend && !closed) {
                    p.reset();
                    continue;
                }
                throw e;
            }
            c.await(p, deadline);
            if (p.error != null) {
                throw p.error;
            }
            return;
        }
    }

    /** The current connection, or a new one made at once (one attempt, not waiting for the reconnect schedule). */
    private Connection ensureConnected(Pending p, long deadline) {
        Connection c = current;
        if (c != null && !c.isDead()) {
            return c;
        }
        String op = operation(p);
        lock.lock();
        try {
            if (closed) {
                throw new ConnectionException("ENOTCONN", op + ": the client is closed (ENOTCONN)");
            }
            if (fatal != null) {
                throw new ConnectionException("ENOTCONN", op + ": not connected: " + fatal.getMessage() + " (ENOTCONN)", fatal);
            }
            if (!options.reconnect()) {
                throw new ConnectionException("ENOTCONN", op + ": not connected (the client does not reconnect) (ENOTCONN)");
            }
        } finally {
            lock.unlock();
        }
        try {
            if (!connectLock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new RequestTimeoutException(op + ": not connected, and a reconnect in progress did not end in time (ETIMEDOUT)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ConnectionException("EINTR", op + ": interrupted while waiting for a reconnect (EINTR)");
        }
        try {
            c = current;
            if (c != null && !c.isDead()) {
                return c;
            }
            if (closed) {
                throw new ConnectionException("ENOTCONN", op + ": the client is closed (ENOTCONN)");
            }
            try {
                return connectNow(deadline, false);
            } catch (ParambusException e) {
                noteFatal(e);
                throw new ConnectionException("ENOTCONN", op + ": not connected, and connecting again failed: "
                        + e.getMessage() + " (ENOTCONN)", e);
            }
        } finally {
            connectLock.unlock();
        }
    }

    private String operation(Pending p) {
        return switch (p.type) {
            case Wire.GET -> "get " + instance;
            case Wire.SET -> "set " + instance;
            case Wire.SUBSCRIBE -> "subscribe " + instance;
            case Wire.STATS_GET -> "stats " + instance;
            case Wire.PING -> "ping " + instance;
            default -> Wire.typeName(p.type) + " " + instance;
        };
    }

    // ---- Connecting ------------------------------------------------------------------------------------------------

    /** Whether an error of a connect means that trying again cannot help (another schema or protocol). */
    private static boolean isFatal(ParambusException e) {
        return "ESTALE".equals(e.errno()) || "EPROTONOSUPPORT".equals(e.errno());
    }

    private void noteFatal(ParambusException e) {
        if (!isFatal(e)) {
            return;
        }
        lock.lock();
        try {
            if (fatal == null) {
                fatal = e;
                reconnectPending = false;
                connectionEvent(ConnectionListener.State.CLOSED, e);
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes a connection, shakes hands (and on the first, fetches the schema), subscribes
     * every subscription again, and makes it the current one. The caller holds connectLock.
     */
    private Connection connectNow(long deadline, boolean first) {
        String op = "connect " + instance;
        Path path = SocketAccess.find(options.socketDir(), instance, op);
        SocketChannel ch = SocketAccess.connect(path, trusted, op);
        Connection c;
        try {
            c = new Connection(this, ch, path);
        } catch (IOException e) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // Nothing to lose.
            }
            throw new ConnectionException("ECONNRESET", op + ": " + e.getMessage() + " (ECONNRESET)", e);
        }
        try {
            Schema s = schema;
            Requests.Hello hello = new Requests.Hello(s != null ? s.hash() : options.schemaHash(), nameBytes);
            List<Pending> batch = new ArrayList<>();
            batch.add(hello);
            List<Requests.Subscribe> renewals = new ArrayList<>();
            lock.lock();
            try {
                for (Subscription sub : subscriptions.values()) {
                    renewals.add(new Requests.Subscribe(sub, true));
                }
            } finally {
                lock.unlock();
            }
            batch.addAll(renewals);
            try {
                c.sendAll(batch, deadline);
            } catch (ConnectionException e) {
                // Refused at once (too many clients): the ERROR that says why, if it came.
                throw c.cause() instanceof ServerErrorException se ? se : e;
            }
            c.await(hello, deadline);
            if (hello.error != null) {
                throw hello.error;
            }
            Wire.HelloReply h = hello.result;
            if (h.version() != Wire.VERSION) {
                throw new ServerErrorException(op, -Errno.EPROTONOSUPPORT, "the server speaks protocol version "
                        + Integer.toUnsignedString(h.version()) + ", this client 1");
            }
            if (s != null && (h.schemaHash() != s.hash() || h.paramCount() != s.paramCount())) {
                throw new ServerErrorException(op, -Errno.ESTALE, String.format("schema hash differs: instance 0x%016x, "
                        + "client 0x%016x", h.schemaHash(), s.hash()));
            }
            c.handshakeDone(h);
            if (s == null) {
                Requests.Simple get = new Requests.Simple(Wire.SCHEMA_GET, null, 0);
                c.send(get, deadline);
                c.await(get, deadline);
                if (get.error != null) {
                    throw get.error;
                }
                Schema parsed;
                try {
                    parsed = Schema.parse(get.result);
                } catch (ParambusException e) {
                    throw new ProtocolErrorException(op + ": the server's schema does not parse: " + e.getMessage());
                }
                if (parsed.hash() != h.schemaHash() || parsed.paramCount() != h.paramCount()) {
                    throw new ProtocolErrorException(String.format("%s: the server's schema has hash 0x%016x and %d parameters, "
                            + "HELLO_REPLY said 0x%016x and %d (EPROTO)", op, parsed.hash(), parsed.paramCount(),
                            h.schemaHash(), h.paramCount()));
                }
                schema = parsed;
            }
            for (Requests.Subscribe r : renewals) {
                c.await(r, deadline);
            }
            if (c.isDead()) {
                throw c.cause();
            }
            lastHello = h;
            lock.lock();
            try {
                if (closed) {
                    throw new ConnectionException("ENOTCONN", op + ": the client was closed (ENOTCONN)");
                }
                current = c;
                reconnectPending = false;
                backoffNanos = options.reconnectDelay().toNanos();
                if (!first) {
                    connectionEvent(ConnectionListener.State.CONNECTED, null);
                }
                changed.signalAll();
            } finally {
                lock.unlock();
            }
            return c;
        } catch (RuntimeException e) {
            c.kill(e instanceof ParambusException pe ? pe : new ConnectionException("ECONNRESET", op + ": " + e, e));
            throw e;
        }
    }

    /** A connection ended ({@link Connection#kill}): if it was the current one, plan the reconnect. */
    void connectionLost(Connection c, ParambusException cause) {
        lock.lock();
        try {
            if (current != c) {
                return;
            }
            current = null;
            for (Subscription s : subscriptions.values()) {
                if (s.connection() == c) {
                    s.unbound();
                    if (s.listener() != null) {
                        events.add(new Event(Kind.DISCONNECTED, s, null, cause, null));
                    }
                }
            }
            connectionEvent(ConnectionListener.State.DISCONNECTED, cause);
            if (!closed && options.reconnect() && fatal == null) {
                backoffNanos = options.reconnectDelay().toNanos();
                reconnectAt = System.nanoTime() + backoffNanos;
                reconnectPending = true;
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    // ---- Subscriptions ----------------------------------------------------------------------------------------------

    /**
     * Subscribes to parameters, with a listener that the dispatcher thread calls: first
     * with every parameter's current value, then with what changed
     * (docs/socket-protocol.md §3.4).
     *
     * @throws ParambusException {@code EINVAL} if none or more than the schema's parameters are given
     * @throws ServerErrorException {@code ENOENT} (an index out of range), {@code EACCES}
     *         ({@code noread} or {@code nosubscriptions}), {@code EINVAL} (a bad deadband),
     *         {@code EMFILE} (more than pbusd's max_subscriptions)
     * @throws ConnectionException as every request (no connection, or lost before the reply)
     * @throws RequestTimeoutException as every request (no reply in time)
     */
    public Subscription subscribe(int[] indexes, SubscribeOptions options, SubscriptionListener listener) {
        if (listener == null) {
            throw new NullPointerException("listener");
        }
        return subscribeImpl(indexes, options, listener);
    }

    /**
     * Subscribes to parameters, to be read with {@link Subscription#next}: the first call
     * brings every parameter's current value, later calls what changed.
     *
     * @throws ParambusException as {@link #subscribe(int[], SubscribeOptions, SubscriptionListener)}
     * @throws ServerErrorException as {@link #subscribe(int[], SubscribeOptions, SubscriptionListener)}
     * @throws ConnectionException as every request
     * @throws RequestTimeoutException as every request
     */
    public Subscription subscribe(int[] indexes, SubscribeOptions options) {
        return subscribeImpl(indexes, options, null);
    }

    /**
     * Subscribes to every parameter whose name starts with {@code prefix} ("" for all)
     * and that may be subscribed to ({@link Schema#subscribableWithPrefix}), with a listener.
     *
     * @throws ParambusException {@code ENOENT} if no parameter matches
     * @see #subscribe(int[], SubscribeOptions, SubscriptionListener)
     */
    public Subscription subscribePrefix(String prefix, SubscribeOptions options, SubscriptionListener listener) {
        return subscribe(prefixIndexes(prefix), options, listener);
    }

    /**
     * Subscribes to every parameter whose name starts with {@code prefix}, to be read with
     * {@link Subscription#next}.
     *
     * @throws ParambusException {@code ENOENT} if no parameter matches
     * @see #subscribe(int[], SubscribeOptions)
     */
    public Subscription subscribePrefix(String prefix, SubscribeOptions options) {
        return subscribe(prefixIndexes(prefix), options);
    }

    private int[] prefixIndexes(String prefix) {
        int[] indexes = schema.subscribableWithPrefix(prefix);
        if (indexes.length == 0) {
            throw new ParambusException("ENOENT", "subscribe " + instance + ": no parameter that may be subscribed to starts with '"
                    + prefix + "' (ENOENT)");
        }
        return indexes;
    }

    private Subscription subscribeImpl(int[] indexes, SubscribeOptions options, SubscriptionListener listener) {
        if (indexes.length == 0 || indexes.length > schema.paramCount()) {
            throw new ParambusException("EINVAL", "subscribe " + instance + ": " + indexes.length + " parameters (1 to "
                    + schema.paramCount() + ") (EINVAL)");
        }
        Subscription s;
        lock.lock();
        try {
            if (closed) {
                throw new ConnectionException("ENOTCONN", "subscribe " + instance + ": the client is closed (ENOTCONN)");
            }
            do {
                nextSubscriptionId++;
            } while (nextSubscriptionId == 0 || subscriptions.containsKey(nextSubscriptionId));
            s = new Subscription(this, nextSubscriptionId, indexes.clone(), options, listener);
            subscriptions.put(s.id(), s);
            wantsReader = true;
            ensureDispatcher();
        } finally {
            lock.unlock();
        }
        Requests.Subscribe p = new Requests.Subscribe(s, false);
        try {
            transact(p, true);
        } catch (RuntimeException e) {
            unsubscribeQuietly(s);
            throw e;
        }
        return s;
    }

    /** SUBSCRIBED read on {@code c} (by its reader): the subscription is bound to its server id before the NOTIFY that follows is read. */
    void subscribed(Connection c, Subscription s, int serverId, boolean renewal) {
        boolean forget;
        lock.lock();
        try {
            forget = s.isClosed();
            if (!forget) {
                s.bound(c, serverId);
                c.bind(serverId, s);
                if (renewal && s.listener() != null) {
                    events.add(new Event(Kind.RESUBSCRIBED, s, null, null, null));
                }
            }
        } finally {
            lock.unlock();
        }
        if (forget) {
            forgetLater(c, serverId);
        }
    }

    void resubscribeRefused(Subscription s, ParambusException error) {
        if (s.listener() != null) {
            events.add(new Event(Kind.RESUBSCRIBE_FAILED, s, null, error, null));
        }
    }

    /**
     * Undoes a subscription pbusd made that nobody wants (its caller gave up, or closed it
     * meanwhile). Not from the reader itself, which must never write: a short virtual thread does it.
     */
    void forgetLater(Connection c, int serverId) {
        Thread.ofVirtual().name("pbus-forget-" + instance).start(() -> {
            Requests.Simple p = new Requests.Simple(Wire.UNSUBSCRIBE, null, serverId);
            try {
                c.send(p, System.nanoTime() + timeoutNanos);
                c.await(p, System.nanoTime() + timeoutNanos);
            } catch (ParambusException e) {
                // The connection's end ends the subscription too.
            }
            c.unbind(serverId);
        });
    }

    void unsubscribe(Subscription s) {
        Connection c;
        int serverId;
        lock.lock();
        try {
            if (s.isClosed()) {
                return;
            }
            s.markClosed();
            subscriptions.remove(s.id());
            c = s.connection();
            serverId = s.serverId();
            updateWantsReader();
        } finally {
            lock.unlock();
        }
        if (c == null || serverId == 0 || c.isDead()) {
            return;
        }
        Requests.Simple p = new Requests.Simple(Wire.UNSUBSCRIBE, null, serverId);
        long deadline = System.nanoTime() + timeoutNanos;
        try {
            c.send(p, deadline);
            c.await(p, deadline);
        } catch (ConnectionException e) {
            return; // the connection's end ended the subscription too
        } finally {
            if (p.done) {
                c.unbind(serverId);
            }
        }
        if (p.error instanceof ServerErrorException se && se.code() == -Errno.ENOENT || p.error instanceof ConnectionException) {
            return;
        }
        if (p.error != null) {
            throw p.error;
        }
    }

    private void unsubscribeQuietly(Subscription s) {
        try {
            unsubscribe(s);
        } catch (ParambusException e) {
            // The caller reports the error that made it give up.
        }
    }

    /** Under lock: whether a reader is wanted (subscriptions or listeners), waking the dispatcher if not. */
    private void updateWantsReader() {
        boolean want = !closed && (!subscriptions.isEmpty() || !listeners.isEmpty());
        if (wantsReader && !want) {
            wantsReader = false;
            Connection c = current;
            if (c != null) {
                c.wakeReader();
            }
            changed.signalAll();
        }
        wantsReader = want;
    }

    /** Under lock: a connection event for the listeners, if there are any (nobody else would take it off the queue). */
    private void connectionEvent(ConnectionListener.State state, ParambusException cause) {
        if (!listeners.isEmpty()) {
            events.add(new Event(Kind.CONNECTION, null, null, cause, state));
        }
    }

    boolean wantsReader() {
        return wantsReader;
    }

    boolean hasEvents() {
        return !events.isEmpty();
    }

    void enqueueValues(Subscription s, List<Value> values) {
        events.add(new Event(Kind.VALUES, s, values, null, null));
    }

    // ---- Connection listeners --------------------------------------------------------------------------------------

    /**
     * Adds a listener told of losses, reconnects and the client's end. It runs on the
     * dispatcher thread, which runs while the client has a listener or a subscription.
     */
    public void addConnectionListener(ConnectionListener listener) {
        if (listener == null) {
            throw new NullPointerException("listener");
        }
        lock.lock();
        try {
            listeners.add(listener);
            if (!closed) {
                wantsReader = true;
                ensureDispatcher();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Removes a listener added before; no call of it starts after this returns. */
    public void removeConnectionListener(ConnectionListener listener) {
        lock.lock();
        try {
            listeners.remove(listener);
            updateWantsReader();
        } finally {
            lock.unlock();
        }
    }

    // ---- The dispatcher ----------------------------------------------------------------------------------------------

    /** Under lock: a dispatcher thread runs. */
    private void ensureDispatcher() {
        if (dispatcher != null) {
            return;
        }
        Runnable body = this::dispatch;
        Thread t = options.dispatcherFactory() != null ? options.dispatcherFactory().newThread(body)
                : Thread.ofPlatform().daemon().name("pbus-client-" + instance).unstarted(body);
        dispatcher = t;
        t.start();
    }

    /** The dispatcher thread: delivers events, reads while nobody else does, reconnects. */
    private void dispatch() {
        for (;;) {
            deliverEvents();
            Connection c;
            boolean attempt = false;
            lock.lock();
            try {
                if (!events.isEmpty()) {
                    continue;
                }
                if (closed || !wantsReader) {
                    dispatcher = null;
                    return;
                }
                c = current;
                if (c == null) {
                    long wait = reconnectPending ? reconnectAt - System.nanoTime() : Long.MAX_VALUE;
                    if (wait > 0) {
                        changed.awaitNanos(Math.min(wait, TimeUnit.SECONDS.toNanos(60)));
                        continue;
                    }
                    attempt = true;
                }
            } catch (InterruptedException e) {
                continue; // nobody interrupts it but to end a wait early
            } finally {
                lock.unlock();
            }
            if (attempt) {
                reconnect();
                continue;
            }
            c.lockReader();
            try {
                c.readForDispatcher();
            } finally {
                c.unlockReader();
            }
        }
    }

    /** The dispatcher's scheduled attempt: on failure, the next one twice as late (at most the maximum). */
    private void reconnect() {
        connectLock.lock();
        try {
            if (current != null || closed) {
                return;
            }
            connectNow(System.nanoTime() + timeoutNanos, false);
        } catch (ParambusException e) {
            noteFatal(e);
            lock.lock();
            try {
                backoffNanos = Math.min(2 * backoffNanos, options.reconnectMaxDelay().toNanos());
                reconnectAt = System.nanoTime() + backoffNanos;
            } finally {
                lock.unlock();
            }
        } finally {
            connectLock.unlock();
        }
    }

    private void deliverEvents() {
        Event e;
        while ((e = events.poll()) != null) {
            try {
                switch (e.kind()) {
                    case VALUES -> {
                        if (!e.subscription().isClosed()) {
                            e.subscription().listener().onValues(e.subscription(), e.values());
                        }
                    }
                    case DISCONNECTED -> {
                        if (!e.subscription().isClosed()) {
                            e.subscription().listener().onDisconnected(e.subscription());
                        }
                    }
                    case RESUBSCRIBED -> {
                        if (!e.subscription().isClosed()) {
                            e.subscription().listener().onResubscribed(e.subscription());
                        }
                    }
                    case RESUBSCRIBE_FAILED -> {
                        if (!e.subscription().isClosed()) {
                            e.subscription().listener().onResubscribeFailed(e.subscription(), e.error());
                        }
                    }
                    case CONNECTION -> {
                        for (ConnectionListener l : listeners) {
                            l.connectionChanged(e.state(), e.error());
                        }
                    }
                }
            } catch (Throwable t) {
                Thread me = Thread.currentThread();
                me.getUncaughtExceptionHandler().uncaughtException(me, t);
            }
        }
    }

    // ---- Closing ---------------------------------------------------------------------------------------------------------

    /**
     * Closes the connection and ends every subscription; requests waiting for replies fail
     * with {@link ConnectionException}, threads in {@link Subscription#next} too. Connection
     * listeners are told ({@code CLOSED}) before the dispatcher thread ends; this waits for
     * that (up to the timeout), unless called from a callback. Closing again does nothing.
     */
    @Override
    public void close() {
        Connection c;
        Thread d;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            wantsReader = false;
            c = current;
            current = null;
            for (Subscription s : subscriptions.values()) {
                s.markClosed();
            }
            subscriptions.clear();
            reconnectPending = false;
            connectionEvent(ConnectionListener.State.CLOSED, null);
            d = dispatcher;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
        if (c != null) {
            c.kill(new ConnectionException("ENOTCONN", "client of " + instance + " closed (ENOTCONN)"));
        }
        if (d != null && d != Thread.currentThread()) {
            try {
                d.join(Math.max(1, timeoutNanos / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The client in words: its instance and state. */
    @Override
    public String toString() {
        return "PbusClient[" + instance + (closed ? ", closed" : isConnected() ? ", connected" : ", disconnected") + "]";
    }
}
