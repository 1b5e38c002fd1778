// SPDX-License-Identifier: MIT
package io.parambus.bench;

import io.parambus.client.ClientOptions;
import io.parambus.client.PbusClient;
import io.parambus.client.Value;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A single-parameter GET through pbusd from the pure-Java socket client
 * (docs/benchmarks.md, Scenario 5): {@link PbusClient#get(int)} of p000, one
 * request at a time, as {@code socket-server get-rtt} does with the C client
 * ({@code pbus_client_get()} of one index) beside it. The client connects to
 * the instance that bench/run-java.py starts (system properties
 * {@code pbus.bench.instance} and {@code pbus.bench.socket.dir}), without
 * reconnecting, as the C role's client; it has no subscription, so no
 * dispatcher thread: the benchmark's thread writes the request and reads the
 * reply itself (the client's lean path).
 *
 * <p>Thread-safety: one benchmark thread.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class SocketGetBench {
    private PbusClient client;
    private int index;

    /** Creates the state (JMH does). */
    public SocketGetBench() {
    }

    /** Connects and finds p000. */
    @Setup(Level.Trial)
    public void connect() {
        String dir = System.getProperty("pbus.bench.socket.dir");
        ClientOptions options = ClientOptions.defaults().withName("bench").withReconnect(false);
        if (dir != null && !dir.isEmpty()) {
            options = options.withSocketDir(Path.of(dir));
        }
        client = PbusClient.connect(Instance.name(), options);
        index = client.schema().find("p000");
    }

    /** Closes the connection. */
    @TearDown(Level.Trial)
    public void close() {
        if (client != null) {
            client.close();
        }
    }

    /**
     * One GET of p000, waiting for its reply.
     *
     * @return the value, with its status, time and version
     */
    @Benchmark
    public Value javaGet() {
        return client.get(index);
    }
}
