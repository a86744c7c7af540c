package example;
import org.junit.jupiter.api.*;
class SetupTest {
  @BeforeAll static void start() { throw new IllegalStateException("server did not start"); }
  @Test void one() {}
  @Test void two() {}
}
