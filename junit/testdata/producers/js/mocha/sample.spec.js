// mocha with mocha-junit-reporter (junit/producers_test.go): passes, a
// failure, a pending test, one title in two describe blocks and a failed
// "before all" hook.
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
