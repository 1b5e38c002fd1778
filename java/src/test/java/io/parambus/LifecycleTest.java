package io.parambus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An instance's life as a Java reader and writer see it (docs/segment-format.md §6):
 * pbusd shut down (closed), killed (orphaned), restarted after being killed (replaced);
 * values stay readable, writes and waits fail with ESTALE once the segment is closed or
 * replaced, and a waiter asleep at that moment is woken with ESTALE.
 */
class LifecycleTest {
    /** A waiter asleep on {@code t} in a thread of its own; its outcome (errno or "changed"/"timeout"). */
    private static CompletableFuture<String> sleepingWaiter(ParamTable t, int index) throws InterruptedException {
        Watch w = t.watch(index);
        CompletableFuture<String> out = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try (w) {
                out.complete(w.await(Duration.ofSeconds(30)) ? "changed" : "timeout");
            } catch (ParambusException e) {
                out.complete(e.errno());
            }
        });
        long end = System.nanoTime() + 10_000_000_000L;
        while (t.wake.get(ValueLayout.JAVA_INT, SegmentLayout.W_WAITERS + 4L * index) == 0) {
            assertTrue(System.nanoTime() < end, "the waiter did not register within 10 s");
            Thread.sleep(1);
        }
        return out;
    }

    private static void assertStale(Runnable r) {
        ParambusException e = assertThrows(ParambusException.class, r::run);
        assertEquals("ESTALE", e.errno(), e.getMessage());
    }

    @Test
    void aCleanShutdownClosesTheTable() throws Exception {
        try (Daemon d = Daemon.start(Daemon.cliSchema());
                ParamTable t = ParamTable.open(d.instance, ParamTable.Access.WRITE)) {
            int trim = t.index("trim");
            t.setInt(trim, 6);
            CompletableFuture<String> waiter = sleepingWaiter(t, t.index("averaging"));
            d.stop();
            assertEquals("ESTALE", waiter.get(10, TimeUnit.SECONDS));
            assertEquals(TableState.CLOSED, t.state());
            assertEquals(6, t.getInt(trim));
            assertStale(() -> t.setInt(trim, 7));
            assertStale(() -> t.batch().setInt(trim, 7).commit());
            try (Watch w = t.watch(trim)) {
                assertStale(() -> w.await(Duration.ofSeconds(1)));
            }
            assertEquals(6, t.getInt(trim));
        }
    }

    @Test
    void aKilledOwnerOrphansAndARestartReplaces() throws Exception {
        try (Daemon d = Daemon.start(Daemon.cliSchema());
                ParamTable t = ParamTable.open(d.instance, ParamTable.Access.WRITE)) {
            int trim = t.index("trim");
            t.setInt(trim, 2);
            d.kill();
            assertEquals(TableState.ORPHANED, t.state());
            assertEquals(2, t.getInt(trim));
            // An orphan's values still take writes (nobody serves them until a new pbusd).
            t.setInt(trim, 3);
            assertEquals(3, t.getInt(trim));
            // Nobody will save a persistent value any more.
            int volts = t.index("voltage_setpoint");
            t.setDouble(volts, 1.25);
            ParambusException e = assertThrows(ParambusException.class,
                    () -> t.awaitSaved(volts, t.version(volts), Duration.ofSeconds(10)));
            assertEquals("ESRCH", e.errno(), e.getMessage());
            try (ParamTable again = ParamTable.open(d.instance)) {
                assertEquals(TableState.ORPHANED, again.state());
                assertEquals(3, again.getInt(trim));
            }
            CompletableFuture<String> waiter = sleepingWaiter(t, t.index("averaging"));
            d.restart();
            assertEquals("ESTALE", waiter.get(10, TimeUnit.SECONDS));
            assertEquals(TableState.REPLACED, t.state());
            assertStale(() -> t.setInt(trim, 4));
            try (ParamTable fresh = ParamTable.open(d.instance, ParamTable.Access.WRITE)) {
                assertEquals(TableState.LIVE, fresh.state());
                assertNotEquals(t.instanceId(), fresh.instanceId());
                assertEquals(0, fresh.getInt(trim));
                fresh.setInt(trim, 5);
                assertEquals("5", d.pbus("get", "trim").out().strip());
            }
            assertEquals(3, t.getInt(trim));
        }
    }
}
