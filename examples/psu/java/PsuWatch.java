/*
 * PsuWatch: the demo power supply watched and switched from Java, through
 * the class pbus-gen generates from examples/psu/psu.fdepl
 * (com.example.psu.PowerSupply, `pbus-gen --java DIR`; docs/generator.md).
 *
 *   java --enable-native-access=ALL-UNNAMED -cp parambus.jar:CLASSES PsuWatch \
 *        [--instance NAME] [--fuse AMPS] [--retry SECONDS] [--seconds N]
 *
 * It opens the instance for writing (the table's trusted writers: the user
 * of its pbusd, or pbusd's --group; docs/security.md), prints the identity
 * and the setpoints, switches the output on, and then watches the measured
 * voltage and current and the output state: it sleeps in ParamTable.watch()
 * until the simulator writes them, and prints a line twice a second. It is
 * an electronic fuse: when the measured current exceeds --fuse (A), it
 * switches the output off, and on again --retry seconds later (0: never).
 * After --seconds, or on Ctrl-C, it switches the output off and ends.
 * `make java-demo` runs it against the demo's pbusd and simulator
 * (examples/psu/java/run, README.md beside this file).
 */

import com.example.psu.PowerSupply;
import com.example.psu.PowerSupply.Identity;
import com.example.psu.PowerSupply.OutputState;
import io.parambus.ParamTable;
import io.parambus.ParambusException;
import io.parambus.Watch;
import java.time.Duration;
import java.util.Locale;

/** The demo program: one class, run from the command line (not thread-safe: one thread, plus the Ctrl-C hook). */
public final class PsuWatch {
    private static final long PRINT_EVERY_NS = 500_000_000L;

    private volatile boolean stopping;

    private PsuWatch() {
    }

    /**
     * Runs the program; exit status 0, 1 on a parambus error (printed as one
     * line), 2 on a usage error.
     *
     * @param args the options above
     */
    public static void main(String[] args) {
        String instance = "psu-demo";
        double fuse = 0.7;
        double retry = 2;
        double seconds = 10;
        try {
            for (int i = 0; i < args.length; i++) {
                String value = i + 1 < args.length ? args[i + 1] : null;
                switch (args[i]) {
                    case "--instance" -> instance = need(args[i], value);
                    case "--fuse" -> fuse = Double.parseDouble(need(args[i], value));
                    case "--retry" -> retry = Double.parseDouble(need(args[i], value));
                    case "--seconds" -> seconds = Double.parseDouble(need(args[i], value));
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
                i++;
            }
        } catch (IllegalArgumentException e) {
            System.err.println("psu-watch: " + e.getMessage()
                    + "\nusage: PsuWatch [--instance NAME] [--fuse AMPS] [--retry SECONDS] [--seconds N]");
            System.exit(2);
        }
        try {
            new PsuWatch().run(instance, fuse, retry, seconds);
        } catch (ParambusException e) {
            System.err.println("psu-watch: " + e.getMessage() + " (" + e.errno() + ")");
            System.exit(1);
        }
    }

    private static String need(String option, String value) {
        if (value == null) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return value;
    }

    private static void say(String format, Object... args) {
        System.out.println("psu-watch: " + String.format(Locale.ROOT, format, args));
        System.out.flush();
    }

    private void run(String instance, double fuse, double retry, double seconds) {
        try (PowerSupply psu = PowerSupply.open(instance, ParamTable.Access.WRITE);
                Watch watch = psu.table().watch(PowerSupply.MEASURED_VOLTAGE, PowerSupply.MEASURED_CURRENT,
                        PowerSupply.OUTPUT_STATE)) {
            Thread main = Thread.currentThread();
            Thread hook = new Thread(() -> {
                stopping = true;
                try {
                    watch.interrupt();
                } catch (ParambusException e) {
                    // already closed: the loop is over
                }
                try {
                    main.join(5000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Runtime.getRuntime().addShutdownHook(hook);

            Identity id = psu.getIdentity();
            say("instance %s: %s %s, serial %s, firmware %s", instance, id.manufacturer(), id.model(),
                    id.serial(), id.firmware());
            say("setpoints %.3f V, %.3f A; fuse at %.3f A, retry after %.1f s, for %.1f s",
                    psu.getVoltageSetpoint(), psu.getCurrentSetpoint(), fuse, retry, seconds);
            OutputState shown = psu.getOutputState();
            psu.setOutputEnable(true);
            say("output on");

            long start = System.nanoTime();
            long end = start + (long) (seconds * 1e9);
            long nextPrint = start + PRINT_EVERY_NS;
            long retryAt = Long.MAX_VALUE;
            while (!stopping) {
                long now = System.nanoTime();
                if (now - end >= 0) {
                    break;
                }
                long wake = Math.min(Math.min(end, nextPrint), retryAt);
                if (watch.await(Duration.ofNanos(Math.max(wake - now, 1_000_000L)))) {
                    while (watch.next() >= 0) {
                        // the values are read below, all of them each time
                    }
                }
                now = System.nanoTime();
                OutputState state = psu.getOutputState();
                if (state != shown) {
                    say("output state %s%s", state,
                            state == OutputState.TRIPPED ? " (" + psu.getTripCause() + ")" : "");
                    shown = state;
                }
                double amps = psu.getMeasuredCurrent();
                if (psu.getOutputEnable() && amps > fuse) {
                    psu.setOutputEnable(false);
                    say("fuse: %.4f A above %.4f A: output off", amps, fuse);
                    retryAt = retry > 0 ? now + (long) (retry * 1e9) : Long.MAX_VALUE;
                } else if (now - retryAt >= 0) {
                    psu.setOutputEnable(true);
                    say("output on (retry)");
                    retryAt = Long.MAX_VALUE;
                }
                if (now - nextPrint >= 0) {
                    say("%6.1f s %8.3f V %7.3f A  %s", (now - start) / 1e9, psu.getMeasuredVoltage(), amps,
                            state);
                    nextPrint += PRINT_EVERY_NS;
                }
            }
            psu.setOutputEnable(false);
            say("%s after %.1f s: output off", stopping ? "stopped" : "done",
                    (System.nanoTime() - start) / 1e9);
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // Ctrl-C came meanwhile: the hook is waiting for this thread
            }
        }
    }
}
