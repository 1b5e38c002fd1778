package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Virtual-thread friendliness: 1,000 virtual threads each get a value, subscribe and wait
 * for a change through the client (the dispatcher a virtual thread too, two carrier
 * threads for all), then one write wakes them all; JFR records {@code jdk.VirtualThreadPinned}
 * with no threshold (after a warm-up, see {@link ChildMain}) and must record none with the
 * client's code on the pinned stack. A control in the same JVM pins on purpose (a
 * virtual thread sleeping inside an upcall from native code) and must be recorded, so the
 * check can fail. Runs in a JVM of its own ({@link ChildMain}) to record and limit carriers
 * without touching the test JVM.
 */
class PinningTest {
    @Test
    void aThousandWaitingVirtualThreadsPinNoCarrier() throws Exception {
        Path out = Files.createTempDirectory("pbus-jfr");
        Path jfr = out.resolve("pinning.jfr");
        try (Pbusd pbusd = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs"), "--max-subscriptions", "1100")) {
            ChildJvm.Result r = ChildJvm.run(null, List.of("-Djdk.virtualThreadScheduler.parallelism=2",
                    "-Djdk.virtualThreadScheduler.maxPoolSize=2"),
                    "pinning", pbusd.instance, pbusd.socketDir.toString(), "1000", jfr.toString());
            assertEquals(0, r.exit(), r.output());
            assertEquals("1000", r.value("waiting"), r.output());
            assertEquals("1000", r.value("woke"), r.output());
            List<String> events = pinnedEvents(jfr);
            List<String> control = events.stream().filter(e -> e.contains("eventThread = \"control\"")).toList();
            // A pin counts if the client's code is on the pinned thread's stack. The JDK's own
            // virtual threads (the SubPoller threads of its I/O poller, which pin briefly while
            // the poller is being set up, seen under load) run no code of ours.
            List<String> others = events.stream().filter(e -> !e.contains("eventThread = \"control\""))
                    .filter(e -> e.contains("io.parambus.")).toList();
            assertTrue(!control.isEmpty(), "the control's pinning was not recorded: " + events);
            // The first line of the message is what a CI log shows: each pin's thread and top frames.
            assertEquals(List.of(), others, "virtual threads pinned while using the client: "
                    + String.join(" | ", others.stream().map(PinningTest::summary).toList()) + "\n");
        } finally {
            try (Stream<Path> files = Files.walk(out)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** One line for an event: its thread and the first frames of its stack. */
    private static String summary(String event) {
        List<String> parts = new java.util.ArrayList<>();
        for (String line : event.split("\n")) {
            String t = line.strip();
            if (t.startsWith("eventThread") || t.startsWith("pinnedReason") || t.startsWith("blockingOperation")
                    || (t.contains("line:") && parts.size() < 14)) {
                parts.add(t);
            }
        }
        return String.join("; ", parts);
    }

    /** The recording's jdk.VirtualThreadPinned events, as the JDK's jfr tool prints them. */
    private static List<String> pinnedEvents(Path jfr) throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jfr").toString(), "print", "--stack-depth", "64", "--events",
                "jdk.VirtualThreadPinned", jfr.toString()).redirectErrorStream(true).start();
        String text = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0, "jfr print: " + text);
        List<String> events = new java.util.ArrayList<>();
        for (String part : text.split("jdk\\.VirtualThreadPinned \\{")) {
            if (part.contains("eventThread")) {
                events.add(part.strip());
            }
        }
        return events;
    }
}
