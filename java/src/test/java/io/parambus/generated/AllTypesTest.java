package io.parambus.generated;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.parambus.ParamTable;
import io.parambus.ParambusException;
import org.example.alltypes.AllTypes;
import org.example.alltypes.AllTypes.Derived;
import org.example.alltypes.AllTypes.Inner;
import org.example.alltypes.AllTypes.Mode;
import org.example.alltypes.AllTypes.Range;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every kind of accessor pbus-gen generates, on the class of the alltypes
 * fixture (tests/gen/fixtures/alltypes, built into pbus.build/gen-java) and a
 * live pbusd serving its schema (pbus.build/tests/alltypes.pbs): each Java
 * type read at the deployment's defaults, written and read back by
 * {@code pbus}, the unsigned types at their edges, and the records of nested
 * and derived structs, as the C bindings' tests/gen/c/run_alltypes.c does.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AllTypesTest {
    private LiveInstance live;

    @BeforeEach
    void start() throws Exception {
        live = LiveInstance.start("tests/alltypes.pbs", "all");
    }

    @AfterEach
    void stop() {
        live.close();
    }

    @Test
    void everyTypeReadsItsDefault() {
        try (AllTypes a = AllTypes.open(live.name())) {
            assertEquals(0L, a.getUptime());
            assertTrue(a.getB());
            assertEquals((byte) -4, a.getI8());
            assertEquals(200, a.getU8());
            assertEquals(Short.MIN_VALUE, a.getI16());
            assertEquals(65535, a.getU16());
            assertEquals(-1, a.getI32());
            assertEquals(4000000000L, a.getU32());
            assertEquals(Long.MIN_VALUE, a.getI64());
            assertEquals(-1L, a.getU64());   // 2^64 - 1: all 64 bits
            assertEquals(0.25f, a.getF32());
            assertEquals(-2.5e-7, a.getF64());
            assertEquals("50% = half, done", a.getText());
            assertArrayEquals(new byte[] {0, (byte) 0xff, 0x7f}, a.getBlob());
            assertEquals(5L, a.getSmallRange());
            assertEquals(1000L, a.getCapped());
            assertEquals(0L, a.getPercent());
            assertEquals(21.5f, a.getTemperature());
            assertSame(Mode.TEST, a.getMode());
            assertArrayEquals(new int[] {1, 2, 3}, a.getValues());
            assertArrayEquals(new double[0], a.getSamples());
            assertArrayEquals(new boolean[] {true, false}, a.getSwitches());
            assertEquals((short) 0, a.getDerivedOffset());
            assertEquals(3, a.getDerivedInnerGain());
            assertFalse(a.getDerivedInnerInvert());
            assertArrayEquals(new short[] {1, 2}, a.getDerivedTaps());
            assertEquals(new Range(0, 6.28), a.getRange());

            Derived d = a.getDerived();
            assertEquals((short) 0, d.offset());
            assertEquals(new Inner(3, false), d.inner());
            assertArrayEquals(new short[] {1, 2}, d.taps());
        }
    }

    @Test
    void everySetterWritesWhatPbusReads() throws Exception {
        try (AllTypes a = AllTypes.open(live.name(), ParamTable.Access.WRITE)) {
            a.setB(false);
            a.setI8((byte) -100);
            a.setU8(7);
            a.setI16((short) 32767);
            a.setU16(40000);
            a.setI32(Integer.MIN_VALUE);
            a.setU32(4294967295L);
            a.setI64(Long.MAX_VALUE);
            a.setU64(0x8000000000000000L);   // 2^63, above Long.MAX_VALUE as unsigned
            a.setF32(-1.5f);
            a.setF64(1e-300);
            a.setText("h\u00e9llo");
            a.setBlob(new byte[] {(byte) 0xde, (byte) 0xad});
            a.setSmallRange(-5);
            a.setCapped(-10);
            a.setPercent(100);
            a.setTemperature(-40.25f);
            a.setMode(Mode.CALIBRATE);
            a.setValues(new int[] {5, 0, 7, 9});
            a.setSamples(new double[] {1.5, -2});
            a.setSwitches(new boolean[] {false, false, true});
            assertEquals("false", live.get("b"));
            assertEquals("-100", live.get("i8"));
            assertEquals("7", live.get("u8"));
            assertEquals("32767", live.get("i16"));
            assertEquals("40000", live.get("u16"));
            assertEquals("-2147483648", live.get("i32"));
            assertEquals("4294967295", live.get("u32"));
            assertEquals("9223372036854775807", live.get("i64"));
            assertEquals("9223372036854775808", live.get("u64"));
            assertEquals("-1.5", live.get("f32"));
            assertEquals("1e-300", live.get("f64"));
            assertEquals("h\u00e9llo", live.get("text"));
            assertEquals("dead", live.get("blob"));
            assertEquals("-5", live.get("small_range"));
            assertEquals("-10", live.get("capped"));
            assertEquals("100", live.get("percent"));
            assertEquals("-40.25", live.get("temperature"));
            assertEquals("CALIBRATE", live.get("mode"));
            assertEquals("5,0,7,9", live.get("values"));
            assertEquals("1.5,-2", live.get("samples"));
            assertEquals("false,false,true", live.get("switches"));
            // read back through the class
            assertEquals(0x8000000000000000L, a.getU64());
            assertEquals("9223372036854775808", Long.toUnsignedString(a.getU64()));
            assertEquals(4294967295L, a.getU32());
            assertEquals(40000, a.getU16());
            assertSame(Mode.CALIBRATE, a.getMode());
        }
    }

    @Test
    void recordsOfNestedAndDerivedStructs() throws Exception {
        try (AllTypes a = AllTypes.open(live.name(), ParamTable.Access.WRITE)) {
            a.setDerived(new Derived((short) -500, new Inner(255, true), new short[] {(short) 65535, 2, 3}));
            assertEquals("-500", live.get("derived.offset"));
            assertEquals("255", live.get("derived.inner.gain"));
            assertEquals("true", live.get("derived.inner.invert"));
            assertEquals("65535,2,3", live.get("derived.taps"));
            Derived d = a.getDerived();
            assertEquals((short) -500, d.offset());
            assertEquals(new Inner(255, true), d.inner());
            assertArrayEquals(new short[] {-1, 2, 3}, d.taps());
            assertEquals(65535, Short.toUnsignedInt(d.taps()[0]));

            live.set("range.low=-1.25", "range.high=1e10", "derived.offset=499");
            assertEquals(new Range(-1.25, 1e10), a.getRange());
            assertEquals((short) 499, a.getDerived().offset());

            // offset is limited to -500..500: the batch writes nothing
            ParambusException e = assertThrows(ParambusException.class,
                    () -> a.setDerived(new Derived((short) 501, new Inner(1, false), new short[0])));
            assertEquals("ERANGE", e.errno());
            assertEquals("255", live.get("derived.inner.gain"));
            assertEquals("65535,2,3", live.get("derived.taps"));
        }
    }

    @Test
    void unsignedAndSignedLimitsAreTheTablesToCheck() throws Exception {
        try (AllTypes a = AllTypes.open(live.name(), ParamTable.Access.WRITE)) {
            // u8 has max 200; i8 -100..100; the enum only its enumerators
            assertEquals("ERANGE", assertThrows(ParambusException.class, () -> a.setU8(201)).errno());
            assertEquals("ERANGE", assertThrows(ParambusException.class, () -> a.setI8((byte) 101)).errno());
            assertEquals("ERANGE", assertThrows(ParambusException.class, () -> a.setCapped(1001)).errno());
            assertEquals("200", live.get("u8"));
            assertEquals("-4", live.get("i8"));
            assertThrows(ParambusException.class, () -> a.setValues(new int[] {1, 2, 3, 4, 5}));
            assertThrows(ParambusException.class, () -> a.setText("more than twenty bytes long"));
            assertEquals("1,2,3", live.get("values"));
            assertEquals("50% = half, done", live.get("text"));
        }
    }
}
