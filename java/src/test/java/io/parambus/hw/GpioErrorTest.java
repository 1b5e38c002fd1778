package io.parambus.hw;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The GPIO classes' error paths that need no GPIO chip (the host has none; the VM tests
 * cover the rest against gpio-sim): every failed system call is a {@link HwException}
 * naming operation, device and errno; arguments are refused before any call; a blocking
 * wait is refused on a virtual thread.
 */
class GpioErrorTest {
    private static void assertHw(HwException e, String operation, String device, String errno) {
        assertEquals(operation, e.operation(), e.getMessage());
        assertEquals(device, e.device(), e.getMessage());
        assertEquals(errno, e.errno(), e.getMessage());
        assertTrue(e.getMessage().startsWith(operation + " on " + device + ": " + errno + " ("), e.getMessage());
    }

    @Test
    void aFileThatIsNotAChipIsENOTTY() {
        HwException e = assertThrows(HwException.class, () -> GpioChip.open("/dev/null"));
        assertHw(e, "GPIO chip info", "/dev/null", "ENOTTY");
    }

    @Test
    void aMissingChipIsENOENT() {
        HwException e = assertThrows(HwException.class, () -> GpioChip.open("/dev/gpiochip-no-such"));
        assertHw(e, "GPIO chip open", "/dev/gpiochip-no-such", "ENOENT");
        e = assertThrows(HwException.class, () -> GpioChip.openByName("gpiochip-no-such"));
        assertHw(e, "GPIO chip open", "/dev/gpiochip-no-such", "ENOENT");
        e = assertThrows(HwException.class, () -> GpioChip.openByLabel("no-such-label"));
        assertEquals("ENOENT", e.errno());
        assertTrue(e.getMessage().contains("'no-such-label'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> GpioChip.openByName("../null"));
        assertThrows(IllegalArgumentException.class, () -> GpioChip.open(""));
        assertThrows(IllegalArgumentException.class, () -> GpioChip.locateLine(""));
        // Whatever chips this machine has, the listing works and names each once.
        assertEquals(GpioChip.list().stream().map(GpioChipInfo::path).distinct().count(), GpioChip.list().size());
    }

    /** A request over a pipe: the ioctls of a line request fail ENOTTY there, naming the request. */
    @Test
    void requestCallsFailNamingTheRequest() {
        try (PipeRequest p = PipeRequest.open(new int[] {4, 9})) {
            GpioRequest r = p.request;
            assertHw(assertThrows(HwException.class, () -> r.getValues(0b11)), "GPIO get values", "pipe lines 4,9",
                    "ENOTTY");
            assertHw(assertThrows(HwException.class, () -> r.setValue(9, true)), "GPIO set values", "pipe lines 4,9",
                    "ENOTTY");
            assertHw(assertThrows(HwException.class, () -> r.reconfigure(4, GpioLineSettings.output(true).build())),
                    "GPIO reconfigure", "pipe lines 4,9", "ENOTTY");
            // Arguments are refused before any call.
            assertTrue(assertThrows(IllegalArgumentException.class, () -> r.getValues(0)).getMessage()
                    .contains("selects no line"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> r.setValues(0b100, 0)).getMessage()
                    .contains("beyond the request's 2"));
            assertTrue(assertThrows(IllegalArgumentException.class, () -> r.getValue(5)).getMessage()
                    .contains("offset 5 is not a line of this request"));
            assertThrows(IllegalArgumentException.class, () -> r.reconfigure(java.util.List.of()));
            assertEquals(1, r.indexOf(9));
            assertEquals(-1, r.indexOf(5));
            assertEquals(0b11, r.allLinesMask());
            r.close();
            r.close(); // idempotent
            assertHw(assertThrows(HwException.class, () -> r.getValues(1)), "GPIO get values", "pipe lines 4,9",
                    "EBADF");
        }
    }

    @Test
    void readEventsTimesOutAndRefusesToBlockAVirtualThread() throws Exception {
        try (PipeRequest p = PipeRequest.open(new int[] {0}); GpioEventBuffer buf = new GpioEventBuffer(4)) {
            long t0 = System.nanoTime();
            assertEquals(0, p.request.readEvents(buf, Duration.ofMillis(50)));
            assertTrue(System.nanoTime() - t0 >= 50_000_000L);
            assertEquals(0, p.request.readEvents(buf, Duration.ZERO));
            CompletableFuture<Throwable> onVirtual = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> {
                try {
                    assertEquals(0, p.request.readEvents(buf, Duration.ZERO)); // never blocks: allowed
                    p.request.readEvents(buf, Duration.ofMillis(10));
                    onVirtual.complete(null);
                } catch (Throwable t) {
                    onVirtual.complete(t);
                }
            });
            Throwable t = onVirtual.get(10, TimeUnit.SECONDS);
            assertTrue(t instanceof IllegalStateException && t.getMessage().contains("virtual thread"), "" + t);
            // A partial record is an error, not a silent truncation.
            p.writeRaw(new byte[20]);
            HwException e = assertThrows(HwException.class, () -> p.request.readEvents(buf, Duration.ofSeconds(5)));
            assertEquals("EIO", e.errno());
            assertTrue(e.getMessage().contains("not a whole number of 48-byte events"), e.getMessage());
        }
    }

    @Test
    void readEventsReadsWholeBatches() {
        try (PipeRequest p = PipeRequest.open(new int[] {2, 3}); GpioEventBuffer buf = new GpioEventBuffer(3)) {
            p.writeEvents(1, 5); // 5 events, seqno 1..5, lines 2 and 3 in turn
            assertEquals(3, p.request.readEvents(buf, Duration.ofSeconds(5)));
            assertEquals(3, buf.size());
            assertEquals(1, buf.seqno(0));
            assertEquals(3, buf.seqno(2));
            assertEquals(2, p.request.readEvents(buf, Duration.ofSeconds(5)));
            assertEquals(new GpioEdgeEvent(PipeRequest.timestamp(5), GpioEdgeEvent.Type.RISING, 2, 5, 3, 0),
                    buf.event(1));
            assertThrows(IndexOutOfBoundsException.class, () -> buf.offset(2));
            assertEquals(0, p.request.readEvents(buf, Duration.ZERO));
            assertEquals(0, buf.size());
        }
        assertThrows(IllegalArgumentException.class, () -> new GpioEventBuffer(0));
        assertThrows(IllegalArgumentException.class, () -> new GpioEventBuffer(GpioEventBuffer.MAX_CAPACITY + 1));
    }
}
