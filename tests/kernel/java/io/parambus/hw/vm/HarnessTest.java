package io.parambus.hw.vm;

import io.parambus.internal.Native;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The harness's own check of the guest's Java runtime (the Java counterpart of
 * tests/kernel/selftest): the runtime cut by build.py starts, FFM downcalls reach the
 * C library copied from the host, and the devices of ENVIRONMENT.md are visible.
 */
public class HarnessTest {
    public static void main(String[] args) {
        VmSuite.main(HarnessTest.class, args);
    }

    @VmSuite.Case
    public void runtime_is_ffm_capable() {
        int feature = Runtime.version().feature();
        VmSuite.check(feature >= 22, "the guest's Java is %d; the FFM API needs 22", feature);
        VmSuite.equal(0, Native.geteuid(), "euid through an FFM downcall");
        VmSuite.check(Native.unsupportedReason() == null, "unsupported: %s", Native.unsupportedReason());
    }

    @VmSuite.Case
    public void devices_are_visible() {
        for (String p : new String[] {"/run/pbus/gpio/pbus-sim0", "/run/pbus/gpio/pbus-sim1", "/run/pbus/i2c-stub",
                "/run/pbus/i2c-mock", "/run/pbus/spi0", "/run/pbus/spi1", "/run/pbus/pwmchip", "/dev/ttyS1",
                "/dev/ttyS2"}) {
            VmSuite.check(Files.exists(Path.of(p)), "%s is missing", p);
        }
    }

    @VmSuite.Case
    public void ioctl_errors_come_back_as_errno() throws Exception {
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            var capture = arena.allocate(Native.captureLayout());
            int fd = Native.open("/dev/null", Native.O_RDWR);
            try {
                // TCGETS on /dev/null: not a terminal.
                int r = Native.ioctl(fd, 0x5401, arena.allocate(64), capture);
                VmSuite.equal(-25L, (long) r, "TCGETS on /dev/null (-ENOTTY)");
            } finally {
                Native.close(fd);
            }
        }
    }
}
