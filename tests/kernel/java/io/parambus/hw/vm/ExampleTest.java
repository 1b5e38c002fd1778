package io.parambus.hw.vm;

import io.parambus.ParamTable;
import io.parambus.Sample;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The Java hardware example, end to end (issue 18, item 4): the real pbusd serves the
 * demo power supply (psu.pbs, without hardware bindings: no pbus-hwd), and
 * examples/psu/java/PsuGpioBridge.java runs as its own JVM against gpio-sim's
 * pbus-sim0: edges of line A1 (the interlock) become writes of {@code interlock_open}
 * carrying the kernel's timestamp, and {@code output_enable}, set through pbusd with
 * the {@code pbus} tool, drives line A0 (the relay).
 *
 * <p>The daemon and the bridge are started once for the program (the cases run in name
 * order and build on each other) and stopped by a shutdown hook.
 */
public class ExampleTest {
    public static void main(String[] args) {
        VmSuite.main(ExampleTest.class, args);
    }

    private static final String INSTANCE = "psu-java";
    private static final String CHIP = "pbus-sim0";
    private static final int RELAY = 0, INTERLOCK = 1; // A0, A1
    private static final List<Process> CHILDREN = new ArrayList<>();
    private static final BlockingQueue<String> BRIDGE_OUT = new LinkedBlockingQueue<>();
    private static Process bridge;
    /** The lines expectLine skipped last time. */
    private static List<String> skipped = List.of();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (Process p : CHILDREN) {
                p.destroyForcibly();
            }
        }));
    }

    private static Process start(List<String> cmd, File log) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (log != null) {
            pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log));
        }
        Process p = pb.start();
        CHILDREN.add(p);
        return p;
    }

    /** pbusd serving psu.pbs as INSTANCE, once; returns when its table can be opened. */
    private static synchronized void pbusd() throws Exception {
        if (!CHILDREN.isEmpty()) {
            return;
        }
        start(List.of("/usr/bin/pbusd", "--schema", "/etc/parambus/psu.pbs", "--instance", INSTANCE,
                "--state-dir", "/tmp/psu-java-state"), new File("/tmp/pbusd-psu-java.log"));
        long end = System.nanoTime() + 20_000_000_000L;
        while (true) {
            try (ParamTable t = ParamTable.open(INSTANCE)) {
                VmSuite.check(t.index("output_enable") >= 0, "psu.pbs has no output_enable");
                return;
            } catch (RuntimeException e) {
                if (System.nanoTime() > end) {
                    throw new AssertionError("pbusd did not serve " + INSTANCE + " in 20 s: " + e.getMessage()
                            + "; its log: " + Kenv.read("/tmp/pbusd-psu-java.log"));
                }
                Thread.sleep(50);
            }
        }
    }

    /** The bridge as a JVM of its own (the guest's runtime and jar); returns after its "ready" line. */
    private static void startBridge() throws Exception {
        BRIDGE_OUT.clear();
        String java = System.getProperty("java.home") + "/bin/java";
        bridge = start(List.of(java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                "PsuGpioBridge", "--instance", INSTANCE, "--chip", CHIP, "--interlock", "A1", "--relay", "A0"),
                null);
        Process p = bridge;
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null;) {
                    System.out.println("# bridge: " + line);
                    BRIDGE_OUT.add(line);
                }
            } catch (IOException e) {
                BRIDGE_OUT.add("(bridge output ended: " + e.getMessage() + ")");
            }
        });
        expectLine("bridging ", 60);
    }

    private static void stopBridge() throws InterruptedException {
        bridge.destroy();
        VmSuite.check(bridge.waitFor(10, TimeUnit.SECONDS), "the bridge did not end on SIGTERM");
        CHILDREN.remove(bridge);
    }

    /** The bridge's next line starting with prefix (other lines skipped), within seconds. */
    private static String expectLine(String prefix, int seconds) throws InterruptedException {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        skipped = new ArrayList<>();
        while (true) {
            String line = BRIDGE_OUT.poll(Math.max(1, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError("the bridge printed no '" + prefix + "...' line in " + seconds
                        + " s (it printed " + skipped + (bridge.isAlive() ? "" : "; it exited " + bridge.exitValue())
                        + ")");
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            skipped.add(line);
        }
    }

    private static void pbusSet(String param, String value) throws Exception {
        Process p = new ProcessBuilder("/usr/bin/pbus", "-i", INSTANCE, "set", param + "=" + value)
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        VmSuite.check(p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0, "pbus set %s %s failed: %s", param,
                value, out);
    }

    private static void awaitSimValue(int offset, int want, String what) throws InterruptedException {
        long end = System.nanoTime() + 5_000_000_000L;
        while (Kenv.simValue(CHIP, offset) != want) {
            VmSuite.check(System.nanoTime() < end, "%s: line %d of %s is not %d after 5 s", what, offset, CHIP, want);
            Thread.sleep(2);
        }
    }

    @VmSuite.Case
    public void a_relay_follows_output_enable() throws Exception {
        pbusd();
        startBridge();
        VmSuite.equal(0, Kenv.simValue(CHIP, RELAY), "relay line with output_enable false");
        pbusSet("output_enable", "true");
        awaitSimValue(RELAY, 1, "output_enable set true through pbusd");
        expectLine("relay on", 10);
        pbusSet("output_enable", "false");
        awaitSimValue(RELAY, 0, "output_enable set false through pbusd");
        expectLine("relay off", 10);
    }

    @VmSuite.Case
    public void b_interlock_edges_carry_the_kernel_timestamp() throws Exception {
        pbusd();
        try (ParamTable table = ParamTable.open(INSTANCE)) {
            int p = table.index("interlock_open");
            Sample s = new Sample();
            for (boolean open : new boolean[] {true, false, true, false}) {
                long before = Instant.now().toEpochMilli() * 1_000_000L - 1_000_000L;
                Kenv.simPull(CHIP, INTERLOCK, open);
                String line = expectLine("interlock " + (open ? "open" : "closed") + " at ", 10);
                long ts = Long.parseLong(line.split(" ")[3]);
                long after = Instant.now().toEpochMilli() * 1_000_000L + 1_000_000L;
                VmSuite.check(ts >= before && ts <= after, "edge timestamp %d is not CLOCK_REALTIME between %d and %d",
                        ts, before, after);
                long end = System.nanoTime() + 5_000_000_000L;
                do {
                    table.read(p, s);
                } while ((s.bits() != 0) != open && System.nanoTime() < end);
                VmSuite.equal(open ? 1L : 0L, s.bits(), "interlock_open after the edge");
                VmSuite.equal(ts, s.timestampNs(), "interlock_open's timestamp (the kernel's edge timestamp)");
            }
        }
    }

    @VmSuite.Case
    public void c_a_restarted_bridge_requests_the_relay_with_its_value() throws Exception {
        pbusd();
        pbusSet("output_enable", "true");
        awaitSimValue(RELAY, 1, "output_enable true");
        stopBridge();
        VmSuite.equal(0, Kenv.simValue(CHIP, RELAY), "relay line released (pull-down) while no bridge runs");
        // Watch the line from gpio-sim's side while the new bridge requests it: once high, never low.
        var seen = new java.util.concurrent.atomic.AtomicInteger();
        var glitch = new java.util.concurrent.atomic.AtomicBoolean();
        var stop = new java.util.concurrent.atomic.AtomicBoolean();
        Thread watcher = Thread.ofPlatform().start(() -> {
            while (!stop.get()) {
                int v = Kenv.simValue(CHIP, RELAY);
                if (v == 1) {
                    seen.incrementAndGet();
                } else if (seen.get() > 0) {
                    glitch.set(true);
                }
            }
        });
        startBridge();
        String first = "relay on (output_enable = true, line A0, as requested)";
        VmSuite.check(skipped.contains(first), "the new bridge did not print '%s' (it printed %s)", first, skipped);
        Thread.sleep(200);
        stop.set(true);
        watcher.join();
        VmSuite.check(seen.get() > 0, "the relay line never read high after the restart");
        VmSuite.check(!glitch.get(), "the relay line went low after it was high");
        VmSuite.equal(1, Kenv.simValue(CHIP, RELAY), "relay line after the restart");
        VmSuite.check(BRIDGE_OUT.isEmpty() || !BRIDGE_OUT.peek().startsWith("relay off"),
                "the bridge switched the relay off after the restart");
        pbusSet("output_enable", "false");
        awaitSimValue(RELAY, 0, "output_enable false");
        stopBridge();
    }
}
