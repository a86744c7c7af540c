// jest with jest-junit (junit/producers_test.go): passes, a failure, a skip,
// a todo, parametrised tests and one title in two describe blocks.
describe('allocator', () => {
  test('frees pages', () => { expect(1 + 1).toBe(2); });
  test('charges the ledger', () => { expect(3).toBe(4); });
  test.skip('needs a GPU', () => {});
  test.todo('reports fragmentation');
  test.each([1, 2, 3])('maps %i pages', (n) => { expect(n).toBeLessThan(3); });
});

describe('allocator quota', () => {
  test('frees pages', () => { expect(true).toBe(true); });
});
