package io.parambus.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Nobody else may own the way to the server (docs/socket-protocol.md §1, docs/security.md
 * §3): a pbusd run as another user (nobody, through setpriv; the tests run as root) is
 * refused before a byte is sent, unless that user is named a trusted owner.
 */
class OwnerTest {
    @SuppressWarnings("unchecked")
    private static Map<String, Object> stats(PbusClient c) {
        return (Map<String, Object>) MiniJson.parse(c.stats());
    }

    private static long number(Map<String, Object> m, String key) {
        return ((BigDecimal) m.get(key)).longValue();
    }

    @Test
    void aSocketOfAnotherUserIsRefusedBeforeAnythingIsSent() throws Exception {
        assertEquals(0, SocketAccess.processUids()[1], "the tests run as root (they start pbusd as nobody)");
        try (Pbusd pbusd = Pbusd.startAs("65534:65534", Pbusd.fixture("tests/server/fixtures/server.pbs"));
                PbusClient trusting = PbusClient.connect(pbusd.instance, pbusd.options().withTrustedOwners(List.of("nobody")))) {
            Map<String, Object> before = stats(trusting);
            UntrustedServerException e = assertThrows(UntrustedServerException.class,
                    () -> PbusClient.connect(pbusd.instance, pbusd.options().withTrustedOwners(List.of())));
            assertEquals("EPERM", e.errno());
            assertEquals("nobody", e.serverUser());
            assertEquals(pbusd.socket().toString(), e.socketPath());
            assertTrue(e.getMessage().contains("served by user nobody"), e.getMessage());
            // pbusd saw the connection come and go, and not one byte of it.
            Map<String, Object> after = stats(trusting);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            int stats = 1;
            while (number(after, "connections_total") != number(before, "connections_total") + 1
                    || number(after, "clients") != 1) {
                assertTrue(System.nanoTime() < deadline, "pbusd did not see the refused connection end: " + after);
                Thread.sleep(10);
                after = stats(trusting);
                stats++;
            }
            assertEquals(number(before, "bytes_in") + 12L * stats, number(after, "bytes_in"),
                    "bytes pbusd received besides our " + stats + " STATS_GET frames of 12 bytes");
            // A numeric uid names the owner as well as a name does.
            try (PbusClient numeric = PbusClient.connect(pbusd.instance, pbusd.options().withTrustedOwners(List.of("65534")))) {
                assertEquals(pbusd.pid(), numeric.serverInfo().pid());
            }
        }
    }

    @Test
    void ourOwnPbusdIsTrustedWithoutConfiguration() throws Exception {
        try (Pbusd pbusd = Pbusd.start(Pbusd.fixture("tests/server/fixtures/server.pbs"));
                PbusClient c = PbusClient.connect(pbusd.instance, pbusd.options().withTrustedOwners(List.of()))) {
            assertTrue(c.isConnected());
        }
    }
}
