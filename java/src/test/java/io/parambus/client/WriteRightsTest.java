package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * Who may write (docs/socket-protocol.md §6), seen from the Java client: a program run as
 * an unprivileged user (nobody, in a JVM of its own started through setpriv) reads and
 * subscribes, but pbusd refuses its writes — {@code EPERM} for a parameter it has no right
 * to, {@code EACCES} for a read-only one — and writes nothing.
 */
class WriteRightsTest {
    @Test
    void anUnprivilegedUserReadsButMayNotWrite() throws Exception {
        try (Pbusd pbusd = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs"));
                PbusClient root = pbusd.client()) {
            long levelVersion = root.get("level").version();
            ChildJvm.Result r = ChildJvm.run("65534:65534", List.of(), "rights", pbusd.instance, pbusd.socketDir.toString());
            assertEquals(0, r.exit(), r.output());
            assertEquals("65534", r.value("uid"), r.output());
            assertEquals("ok", r.value("get"), r.output());
            assertEquals("EPERM", r.value("set-level"), r.output());
            assertEquals("EACCES", r.value("set-measured_voltage"), r.output());
            assertEquals("EPERM", r.value("set-shared"), r.output());
            assertEquals("EPERM [-1, -1, -13]", r.value("batch"), r.output());
            assertTrue(r.value("message").contains("shared = 2: this user may not write it (its writers: pbusd's user, root "
                    + "and the group pbus-test-writers) (EPERM); nothing was written"), r.output());
            assertEquals("ok", r.value("subscribe"), r.output());
            assertEquals(levelVersion, root.get("level").version(), "a refused write changed level");
        }
    }
}
