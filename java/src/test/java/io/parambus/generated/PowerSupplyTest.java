package io.parambus.generated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.example.psu.PowerSupply;
import com.example.psu.PowerSupply.Identity;
import com.example.psu.PowerSupply.Limits;
import com.example.psu.PowerSupply.OutputState;
import com.example.psu.PowerSupply.TripCause;
import io.parambus.ParamTable;
import io.parambus.ParambusException;
import io.parambus.SchemaMismatchException;
import io.parambus.Watch;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The class pbus-gen generates for the demo power supply (examples/psu/psu.fdepl,
 * built into pbus.build/gen-java), against a live pbusd serving the demo's
 * compiled schema: the values read through it, a setting written through it
 * seen by {@code pbus get}, refused writes, the schema check, and the values
 * the C simulator (psu-sim, a provider) writes.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PowerSupplyTest {
    private LiveInstance live;

    @BeforeEach
    void start() throws Exception {
        live = LiveInstance.start("examples/psu/psu.pbs", "psu");
    }

    @AfterEach
    void stop() {
        live.close();
    }

    @Test
    void opensTheInstanceAndChecksItsSchema() {
        try (PowerSupply psu = PowerSupply.open(live.name())) {
            ParamTable t = psu.table();
            assertEquals(live.name(), t.instance());
            assertEquals(PowerSupply.INTERFACE, t.interfaceName());
            assertEquals("com.example.psu.PowerSupply", PowerSupply.INTERFACE);
            assertEquals(PowerSupply.SCHEMA_HASH, t.schemaHash());
            assertEquals(18, PowerSupply.PARAM_COUNT);
            assertEquals(PowerSupply.PARAM_COUNT, t.paramCount());
            // the index constants are the table's indexes
            assertEquals(PowerSupply.VOLTAGE_SETPOINT, t.index("voltage_setpoint"));
            assertEquals(PowerSupply.LIMITS_CURRENT, t.index("limits.current"));
            assertEquals(PowerSupply.STATUS_TEXT, t.index("status_text"));
            assertEquals(128, PowerSupply.STATUS_TEXT_MAX_SIZE);
            assertEquals(128, t.param(PowerSupply.STATUS_TEXT).valueSize());
        }
    }

    @Test
    void readsTheDefaults() {
        try (PowerSupply psu = PowerSupply.open(live.name())) {
            assertEquals(0.0, psu.getVoltageSetpoint());
            assertEquals(0.1, psu.getCurrentSetpoint());
            assertFalse(psu.getOutputEnable());
            assertEquals(33.0, psu.getOvpLevel());
            assertEquals(30.0f, psu.getFanDuty());
            assertEquals(new Limits(30, 5), psu.getLimits());
            assertEquals(30.0, psu.getLimitsVoltage());
            assertSame(OutputState.OFF, psu.getOutputState());
            assertSame(TripCause.NONE, psu.getTripCause());
            assertEquals("", psu.getStatusText());
            assertEquals(new Identity("ACME Instruments", "PSU-3005", "", ""), psu.getIdentity());
            assertEquals("PSU-3005", psu.getIdentityModel());
        }
    }

    @Test
    void aSettingWrittenThroughTheClassIsWhatPbusReads() throws Exception {
        try (PowerSupply psu = PowerSupply.open(live.name(), ParamTable.Access.WRITE)) {
            psu.setVoltageSetpoint(12.5);
            psu.setOutputEnable(true);
            psu.setFanDuty(55);
            assertEquals("12.5", live.get("voltage_setpoint"));
            assertEquals("true", live.get("output_enable"));
            assertEquals("55", live.get("fan_duty"));
            assertEquals(12.5, psu.getVoltageSetpoint());

            psu.setLimits(new Limits(20, 3));
            assertEquals("20", live.get("limits.voltage"));
            assertEquals("3", live.get("limits.current"));
            assertEquals(new Limits(20, 3), psu.getLimits());

            // and the other way: pbus writes through pbusd, the class reads it
            live.set("current_setpoint=2.25", "limits.current=4");
            assertEquals(2.25, psu.getCurrentSetpoint());
            assertEquals(new Limits(20, 4), psu.getLimits());
        }
    }

    @Test
    void aWriteOutsideTheLimitsIsRefusedAndChangesNothing() throws Exception {
        try (PowerSupply psu = PowerSupply.open(live.name(), ParamTable.Access.WRITE)) {
            psu.setVoltageSetpoint(5);
            ParambusException e = assertThrows(ParambusException.class, () -> psu.setVoltageSetpoint(40));
            assertEquals("ERANGE", e.errno());
            assertTrue(e.getMessage().contains("voltage_setpoint"), e.getMessage());
            assertEquals("5", live.get("voltage_setpoint"));
            e = assertThrows(ParambusException.class, () -> psu.setOvpLevel(0.5));
            assertEquals("ERANGE", e.errno());
            assertEquals("33", live.get("ovp_level"));

            // a record is one batch: all or nothing
            e = assertThrows(ParambusException.class, () -> psu.setLimits(new Limits(10, 6)));
            assertEquals("ERANGE", e.errno());
            assertEquals("30", live.get("limits.voltage"));
            assertEquals("5", live.get("limits.current"));
            assertEquals(new Limits(30, 5), psu.getLimits());
        }
    }

    @Test
    void aReadOnlyOpeningRefusesWrites() throws Exception {
        try (PowerSupply psu = PowerSupply.open(live.name())) {
            ParambusException e = assertThrows(ParambusException.class, () -> psu.setOutputEnable(true));
            assertEquals("EACCES", e.errno());
            assertEquals("false", live.get("output_enable"));
        }
    }

    @Test
    void anInstanceOfAnotherSchemaIsRefused() throws Exception {
        try (LiveInstance other = LiveInstance.start("tests/alltypes.pbs", "other")) {
            SchemaMismatchException e = assertThrows(SchemaMismatchException.class,
                    () -> PowerSupply.open(other.name()));
            assertEquals("EPROTO", e.errno());
            assertInstanceOf(ParambusException.class, e);
            assertTrue(e.getMessage().contains(other.name()), e.getMessage());
        }
    }

    @Test
    void enumeratorsHaveTheirNumbers() {
        assertEquals(2, OutputState.TRIPPED.value());
        assertSame(OutputState.ON, OutputState.of(1));
        assertSame(TripCause.OVER_TEMPERATURE, TripCause.of(3));
        ParambusException e = assertThrows(ParambusException.class, () -> OutputState.of(7));
        assertEquals("EINVAL", e.errno());
        assertTrue(e.getMessage().contains("com.example.psu.PowerSupply.OutputState"), e.getMessage());
        assertArrayEquals(new OutputState[] {OutputState.OFF, OutputState.ON, OutputState.TRIPPED},
                OutputState.values());
    }

    @Test
    void readsWhatTheSimulatorWrites() throws Exception {
        live.startProgram("examples/psu/psu-sim", live.name());
        try (PowerSupply psu = PowerSupply.open(live.name(), ParamTable.Access.WRITE);
                Watch watch = psu.table().watch(PowerSupply.IDENTITY_SERIAL, PowerSupply.OUTPUT_STATE,
                        PowerSupply.MEASURED_VOLTAGE)) {
            awaitUntil(watch, () -> psu.getIdentitySerial().equals("SIM-" + live.name()));
            assertEquals("SIM-" + live.name(), psu.getIdentity().serial());

            psu.setVoltageSetpoint(5);
            psu.setCurrentSetpoint(2);
            psu.setOutputEnable(true);
            awaitUntil(watch, () -> psu.getOutputState() == OutputState.ON
                    && Math.abs(psu.getMeasuredVoltage() - 5.0) < 0.01);
            assertEquals(Double.parseDouble(live.get("measured_voltage")), psu.getMeasuredVoltage(), 0.05);

            psu.setOvpLevel(4);   // below the setpoint: the simulator trips the output
            awaitUntil(watch, () -> psu.getOutputState() == OutputState.TRIPPED);
            assertSame(TripCause.OVER_VOLTAGE, psu.getTripCause());
            assertEquals("OVER_VOLTAGE", live.get("trip_cause"));
        }
    }

    /** Waits on @watch (no polling) until @condition holds, at most 10 s. */
    private static void awaitUntil(Watch watch, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!condition.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            assertTrue(left > 0, "condition not met within 10 s");
            if (watch.await(Duration.ofNanos(left))) {
                while (watch.next() >= 0) {
                    // drain: the condition reads the values themselves
                }
            }
        }
    }
}
