package io.parambus.client;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadFactory;

/**
 * How a {@link PbusClient} connects and behaves: where the socket is, which schema the
 * program expects, its name, the request timeout, the reconnect policy, whom it trusts
 * to serve the socket and how its dispatcher thread is made. Immutable: each
 * {@code with*} method returns a changed copy, so an options object may be shared
 * between threads and clients. Start from {@link #defaults()}.
 */
public final class ClientOptions {
    private static final ClientOptions DEFAULTS = new ClientOptions(null, 0, "java", Duration.ofSeconds(5), true,
            Duration.ofSeconds(1), Duration.ofSeconds(30), null, null);

    private final Path socketDir;
    private final long schemaHash;
    private final String name;
    private final Duration timeout;
    private final boolean reconnect;
    private final Duration reconnectDelay;
    private final Duration reconnectMaxDelay;
    private final List<String> trustedOwners;
    private final ThreadFactory dispatcherFactory;

    private ClientOptions(Path socketDir, long schemaHash, String name, Duration timeout, boolean reconnect,
            Duration reconnectDelay, Duration reconnectMaxDelay, List<String> trustedOwners, ThreadFactory dispatcherFactory) {
        this.socketDir = socketDir;
        this.schemaHash = schemaHash;
        this.name = name;
        this.timeout = timeout;
        this.reconnect = reconnect;
        this.reconnectDelay = reconnectDelay;
        this.reconnectMaxDelay = reconnectMaxDelay;
        this.trustedOwners = trustedOwners;
        this.dispatcherFactory = dispatcherFactory;
    }

    /**
     * The defaults: the socket directory of docs/socket-protocol.md §1 ({@code PBUS_SOCKET_DIR},
     * {@code /run/parambus}, {@code $XDG_RUNTIME_DIR/parambus}, {@code /tmp/parambus-UID}),
     * any schema, the name {@code java}, a 5 s timeout, reconnecting 1 s after a loss and then
     * twice as long after each failed attempt up to 30 s (as the C client), owners trusted by
     * {@code PBUS_OWNER}, and a platform daemon thread as the dispatcher.
     */
    public static ClientOptions defaults() {
        return DEFAULTS;
    }

    /** The socket's directory: {@code DIR/INSTANCE.sock} is the only place looked at. {@code null}: the search of §1. */
    public ClientOptions withSocketDir(Path dir) {
        return new ClientOptions(dir, schemaHash, name, timeout, reconnect, reconnectDelay, reconnectMaxDelay, trustedOwners,
                dispatcherFactory);
    }

    /**
     * The schema hash the program was built for (a generated binding's hash); 0 accepts
     * any. With another schema pbusd refuses the handshake ({@link ServerErrorException}
     * {@code ESTALE}). After the first connect, reconnects always ask for the first
     * connection's schema.
     */
    public ClientOptions withSchemaHash(long hash) {
        return new ClientOptions(socketDir, hash, name, timeout, reconnect, reconnectDelay, reconnectMaxDelay, trustedOwners,
                dispatcherFactory);
    }

    /**
     * The name pbusd shows for this client ({@code pbus stat}): at most 64 bytes of UTF-8
     * without NUL.
     *
     * @throws IllegalArgumentException if it is longer or contains NUL
     */
    public ClientOptions withName(String name) {
        byte[] b = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (b.length > Wire.NAME_MAX || name.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("client name '" + name + "': more than 64 bytes of UTF-8, or a NUL");
        }
        return new ClientOptions(socketDir, schemaHash, name, timeout, reconnect, reconnectDelay, reconnectMaxDelay,
                trustedOwners, dispatcherFactory);
    }

    /**
     * How long a request waits for its reply, and a connect for the handshake (default 5 s).
     *
     * @throws IllegalArgumentException if not positive
     */
    public ClientOptions withTimeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout " + timeout + " is not positive");
        }
        return new ClientOptions(socketDir, schemaHash, name, timeout, reconnect, reconnectDelay, reconnectMaxDelay,
                trustedOwners, dispatcherFactory);
    }

    /**
     * Whether the client reconnects after the connection is lost (default true). Without,
     * every request after a loss fails with {@link ConnectionException} {@code ENOTCONN}.
     */
    public ClientOptions withReconnect(boolean reconnect) {
        return new ClientOptions(socketDir, schemaHash, name, timeout, reconnect, reconnectDelay, reconnectMaxDelay,
                trustedOwners, dispatcherFactory);
    }

    /**
     * The reconnect schedule: the first attempt {@code first} after a working connection is
     * lost, then twice the previous delay after each failed attempt, at most {@code max}.
     *
     * @throws IllegalArgumentException if a delay is negative or {@code first} above {@code max}
     */
    public ClientOptions withReconnectDelay(Duration first, Duration max) {
        if (first.isNegative() || max.compareTo(first) < 0) {
            throw new IllegalArgumentException("reconnect delays " + first + ", " + max + ": negative, or first above max");
        }
        return new ClientOptions(socketDir, schemaHash, name, timeout, reconnect, first, max, trustedOwners, dispatcherFactory);
    }

    /**
     * The users trusted to serve the socket besides root and this program's effective user:
     * user names or numeric uids (docs/security.md §3). {@code null} (the default): those of
     * the environment variable {@code PBUS_OWNER}, a comma-separated list.
     */
    public ClientOptions withTrustedOwners(List<String> owners) {
        return new ClientOptions(socketDir, schemaHash, name, timeout, reconnect, reconnectDelay, reconnectMaxDelay,
                owners == null ? null : List.copyOf(owners), dispatcherFactory);
    }

    /**
     * What makes the client's dispatcher thread (the thread that reads notifications, runs
     * callbacks and reconnects); {@code null} (the default): a platform daemon thread named
     * {@code pbus-client-INSTANCE}. {@code Thread.ofVirtual().factory()} makes it a virtual thread.
     */
    public ClientOptions withDispatcherFactory(ThreadFactory factory) {
        return new ClientOptions(socketDir, schemaHash, name, timeout, reconnect, reconnectDelay, reconnectMaxDelay,
                trustedOwners, factory);
    }

    /** The socket directory, or {@code null} for the search of §1. */
    public Path socketDir() {
        return socketDir;
    }

    /** The schema hash asked for; 0: any. */
    public long schemaHash() {
        return schemaHash;
    }

    /** The client's name. */
    public String name() {
        return name;
    }

    /** The request timeout. */
    public Duration timeout() {
        return timeout;
    }

    /** Whether the client reconnects. */
    public boolean reconnect() {
        return reconnect;
    }

    /** The first reconnect delay. */
    public Duration reconnectDelay() {
        return reconnectDelay;
    }

    /** The longest reconnect delay. */
    public Duration reconnectMaxDelay() {
        return reconnectMaxDelay;
    }

    /** The trusted owners given, or those of {@code PBUS_OWNER} if none were. */
    public List<String> trustedOwners() {
        if (trustedOwners != null) {
            return trustedOwners;
        }
        String env = System.getenv("PBUS_OWNER");
        return env == null || env.isEmpty() ? List.of()
                : Arrays.stream(env.split(",")).filter(s -> !s.isEmpty()).toList();
    }

    /** The dispatcher's thread factory, or {@code null} for the default. */
    public ThreadFactory dispatcherFactory() {
        return dispatcherFactory;
    }

    /** The options in words. */
    @Override
    public String toString() {
        return "ClientOptions[socketDir=" + socketDir + ", schemaHash=" + Long.toHexString(schemaHash) + ", name=" + name
                + ", timeout=" + timeout + ", reconnect=" + reconnect + " (" + reconnectDelay + " … " + reconnectMaxDelay
                + "), trustedOwners=" + trustedOwners + "]";
    }
}
