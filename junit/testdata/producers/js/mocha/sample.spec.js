// mocha with mocha-junit-reporter (junit/producers_test.go): passes, a
// failure, a pending test, one title in two describe blocks, a failed
// "before all" hook and two failing tests of one title in one block.
const assert = require('assert');

describe('allocator', function () {
  it('frees pages', function () { assert.strictEqual(1 + 1, 2); });
  it('charges the ledger', function () { assert.strictEqual(3, 4); });
  it.skip('needs a GPU', function () {});
});

describe('allocator quota', function () {
  it('frees pages', function () {});
});

describe('server', function () {
  before(function () { throw new Error('connect ECONNREFUSED 127.0.0.1:8000'); });
  it('answers', function () {});
});

describe('calculator', function () {
  it('divides by zero', function () { assert.throws(function () { 1 / 0; }); });
  it('divides by zero', function () { assert.strictEqual(1 / 0, 0); });
});
