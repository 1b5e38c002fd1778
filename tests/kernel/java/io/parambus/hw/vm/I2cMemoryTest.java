package io.parambus.hw.vm;

import io.parambus.hw.I2cBus;
import io.parambus.hw.I2cDevice;
import java.util.Map;

/**
 * Pi4J's users ran out of memory after many I2C calls: here SMBus byte-data reads on
 * i2c-stub (a million, or as many as fit in the time budget under TCG, reported) leave
 * the heap after GC and the resident memory flat and allocate 0 bytes per call.
 *
 * <p>The allocation is measured in a child JVM started with the JIT users run
 * ({@link BusAllocationProbe} says why); this program's own C1-only JVM checks that its
 * heap stays flat too, and reports what the JDK's errno capture costs there.
 */
public class I2cMemoryTest {
    public static void main(String[] args) {
        VmSuite.main(I2cMemoryTest.class, args);
    }

    @VmSuite.Case
    public void million_smbus_reads_allocate_nothing_heap_and_rss_flat() throws Exception {
        // The rate under TCG decides how many fit in 12 s (each of up to three runs): a million when they do.
        Map<String, String> r = BusAllocationProbe.inChild(110, "smbus", I2cBus.pathOfAdapter(I2cTest.STUB), "0x50", "12", "1000000");
        long calls = Long.parseLong(r.get("calls"));
        System.out.printf("# %d SMBus byte-data reads at %s ns each%s%n", calls, r.get("ns_per_call"),
                calls < 1_000_000 ? " (a million does not fit in 12 s here: as many as fit)" : "");
        VmSuite.check(calls >= 100_000, "only %d calls", calls);
        BusAllocationProbe.assertFlat(r, "SMBus read byte data");
    }

    @VmSuite.Case
    public void c1_runtime_heap_flat() {
        // This JVM (C1 only): the errno capture's slice is garbage, collected; nothing is kept.
        try (I2cDevice d = I2cDevice.open(I2cBus.pathOfAdapter(I2cTest.STUB), 0x50)) {
            d.smbusWriteByteData(0x10, 0x5c);
            int n = 50_000;
            for (int i = 0; i < 5_000; i++) {
                d.smbusReadByteData(0x10);
            }
            long heap0 = Kenv.heapAfterGc();
            long a0 = Kenv.allocatedBytes();
            for (int i = 0; i < n; i++) {
                int v = d.smbusReadByteData(0x10);
                if (v != 0x5c) {
                    throw new AssertionError("read " + v);
                }
            }
            long perCall = (Kenv.allocatedBytes() - a0) / n;
            long heap1 = Kenv.heapAfterGc();
            System.out.printf("# C1-only JVM: %d bytes allocated per call (the JDK's capture-state slice), heap after"
                    + " GC %+d bytes over %d calls%n", perCall, heap1 - heap0, n);
            VmSuite.check(heap1 - heap0 < 256 * 1024, "heap after GC grew by %d bytes", heap1 - heap0);
        }
    }
}
