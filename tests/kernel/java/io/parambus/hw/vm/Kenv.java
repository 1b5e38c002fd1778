package io.parambus.hw.vm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The guest environment of tests/kernel/ENVIRONMENT.md seen from Java: the
 * counterpart of tests/kernel/lib/kenv.{c,h} for the Java test programs (the
 * simulated outside world of gpio-sim, devices found by name, bind and unbind).
 * Plain file I/O: nothing here goes through the binding under test.
 */
public final class Kenv {
    private Kenv() {
    }

    private static final String SIMCFG = "/sys/kernel/config/gpio-sim";

    /** A sysfs/debugfs/configfs file's text, trailing newlines and blanks removed. */
    public static String read(String path) {
        try {
            return Files.readString(Path.of(path), StandardCharsets.UTF_8).stripTrailing();
        } catch (IOException e) {
            throw new UncheckedIOException("reading " + path, e);
        }
    }

    /** Writes text to a sysfs/debugfs/configfs file in one write (as echo does). */
    public static void write(String path, String text) {
        try {
            Files.writeString(Path.of(path), text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("writing '" + text + "' to " + path, e);
        }
    }

    /** "/dev/gpiochipN" of a live gpio-sim chip ("pbus-sim0" or "pbus-sim1"). */
    public static String gpiochip(String label) {
        return "/dev/" + read(SIMCFG + "/" + label + "/bank0/chip_name");
    }

    /** The sysfs directory of a live gpio-sim chip's simulated lines. */
    public static String simDir(String label) {
        String dev = read(SIMCFG + "/" + label + "/dev_name");
        String chip = read(SIMCFG + "/" + label + "/bank0/chip_name");
        if (chip.isEmpty() || chip.equals("none")) {
            throw new IllegalStateException("gpio-sim chip " + label + " is not live");
        }
        return "/sys/devices/platform/" + dev + "/" + chip;
    }

    /** Drives an input line from the outside: pull-up (true) or pull-down. */
    public static void simPull(String label, int offset, boolean up) {
        write(simDir(label) + "/sim_gpio" + offset + "/pull", up ? "pull-up" : "pull-down");
    }

    /** The level a line has on the outside (the output value, or the pull of an input). */
    public static int simValue(String label, int offset) {
        String v = read(simDir(label) + "/sim_gpio" + offset + "/value");
        if (!v.equals("0") && !v.equals("1")) {
            throw new IllegalStateException("sim_gpio" + offset + "/value of " + label + " reads '" + v + "'");
        }
        return v.charAt(0) - '0';
    }

    /** Takes a gpio-sim chip offline (false) or back (true; it gets a new gpiochipN). */
    public static void simLive(String label, boolean live) {
        write(SIMCFG + "/" + label + "/live", live ? "1" : "0");
    }

    /** "/dev/i2c-N" of the adapter named name ("SMBus stub driver", "pbus-mock-i2c"). */
    public static String i2cBus(String name) {
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of("/sys/class/i2c-dev"), "i2c-*")) {
            for (Path p : d) {
                if (read(p.resolve("name").toString()).equals(name)) {
                    return "/dev/" + p.getFileName();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no I2C adapter named " + name);
    }

    /** "/sys/class/pwm/pwmchipN" of the mock PWM chip (looked up afresh: it changes on rebind). */
    public static String pwmchip() {
        try (DirectoryStream<Path> d = Files.newDirectoryStream(Path.of("/sys/class/pwm"), "pwmchip*")) {
            for (Path p : d) {
                if (Files.readSymbolicLink(p.resolve("device")).toString().endsWith("/pbus-mock-pwm.0")) {
                    return p.toString();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("the mock PWM chip is not bound");
    }

    /** Unbinds device from a driver, e.g. ("/sys/bus/platform/drivers/pbus-mock-pwm", "pbus-mock-pwm.0"). */
    public static void unbind(String driverDir, String device) {
        write(driverDir + "/unbind", device);
    }

    /** Binds device to a driver. */
    public static void bind(String driverDir, String device) {
        write(driverDir + "/bind", device);
    }

    /** This process's open descriptors (entries of /proc/self/fd). */
    public static int openFds() {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return (int) s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** This process's threads (the Threads: line of /proc/self/status). */
    public static int threads() {
        return (int) statusField("Threads:");
    }

    /** This process's resident memory in KiB (VmRSS: of /proc/self/status). */
    public static long rssKiB() {
        return statusField("VmRSS:");
    }

    private static long statusField(String name) {
        for (String line : read("/proc/self/status").split("\n")) {
            if (line.startsWith(name)) {
                return Long.parseLong(line.substring(name.length()).trim().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("/proc/self/status has no " + name);
    }

    private static final com.sun.management.ThreadMXBean THREAD_BEAN =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();

    /** The bytes the calling thread has allocated so far (its allocation counter). */
    public static long allocatedBytes() {
        return THREAD_BEAN.getCurrentThreadAllocatedBytes();
    }

    /** The heap in use after full collections (the least of three), in bytes. */
    public static long heapAfterGc() {
        Runtime rt = Runtime.getRuntime();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            used = Math.min(used, rt.totalMemory() - rt.freeMemory());
        }
        return used;
    }
}
