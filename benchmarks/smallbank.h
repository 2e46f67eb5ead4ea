// SmallBank (Alomari et al., ICDE 2008; H-Store's form), as papers/nvcaracal-eurosys23.txt
// section 6.2.2 runs it: three tables keyed by customer id (accounts, savings, checking), the
// five transaction types Amalgamate, Balance, DepositChecking, TransactSaving and WriteCheck
// chosen uniformly (SendPayment as a sixth with --send-payment), --hotspot-accounts customers
// (ids 0..H-1) drawing --hotspot-share of the customer picks, the rest uniform over the others.
//
// User aborts (the paper: "two of the transaction types may abort at a rate of 10%"): 10% of
// TransactSaving and WriteCheck inputs are overdraft attempts (an amount no balance covers).
// TransactSaving aborts when it would make the savings balance negative; WriteCheck when the
// check exceeds savings + checking by more than the overdraft limit ($1000), and within it is
// cashed with H-Store's $1 penalty. Ordinary inputs are deposits (TransactSaving) and checks of
// up to $50, so aborts stay near 10% of those two types. SendPayment aborts when checking does
// not cover the payment. An aborting transaction calls TxnManager::user_abort() and is not
// retried.
//
// Conservation: money that enters or leaves the bank (deposits, withdrawals, checks) is booked
// against a teller row (table "tellers", one per thread modulo 64) in the same transaction,
// so the sum of all savings, checking and teller balances is the loaded total after any set of
// committed transactions: check() verifies it after a run and after recovery. This teller
// write is the testbed's addition to SmallBank (one extra small write to a thread-private row).
#pragma once
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "benchmarks/zipf.h"
#include "storage/engine.h"
#include "storage/parallel.h"
#include "storage/schema.h"
#include "system/load_progress.h"
#include "system/options.h"

namespace nvt {

class Smallbank {
 public:
  enum Table : uint32_t { kAccounts = 0, kSavings = 1, kChecking = 2, kTellers = 3 };
  enum Type : int { kAmalgamate, kBalance, kDepositChecking, kTransactSaving, kWriteCheck, kSendPayment, kTypes };
  static constexpr const char* kTypeNames[kTypes] = {"amalgamate", "balance", "deposit_checking",
                                                     "transact_saving", "write_check", "send_payment"};
  static constexpr uint64_t kTellerRows = 64;
  static constexpr uint32_t kBalanceOffset = 8;     // int64 cents after the 8 B key
  static constexpr int64_t kOverdraft = 1ll << 40;  // an amount no balance covers
  static constexpr int64_t kMaxAmount = 5000;       // cents per ordinary deposit or withdrawal
  static constexpr int64_t kOverdraftLimit = 100000;  // WriteCheck may overdraw this much
  static constexpr int64_t kPenalty = 100;          // charged for an overdrawing check
  static constexpr double kOverdraftShare = 0.1;

  explicit Smallbank(const Options& o) : o_(o) {
    accounts_.add("key", 8).add("name", 24);
    balance_.add("key", 8).add("balance", 8);
  }

  std::vector<TableInfo> tables() const {
    return {{kAccounts, "accounts", accounts_, o_.accounts, false, true},
            {kSavings, "savings", balance_, o_.accounts, false, true},
            {kChecking, "checking", balance_, o_.accounts, false, true},
            {kTellers, "tellers", balance_, kTellerRows, false, true}};
  }
  uint64_t database_bytes() const {
    return o_.accounts * (accounts_.tuple_size() + 2 * balance_.tuple_size()) + kTellerRows * balance_.tuple_size();
  }
  // SmallBank's tuples (16-32 B) are smaller than their index entries (system/driver.h).
  static constexpr bool kSmallTuples = true;
  uint32_t tuple_size() const { return accounts_.tuple_size(); }
  std::string layout() const {
    return "smallbank accounts=" + std::to_string(o_.accounts) + " accounts(" + accounts_.describe() +
           ") balance(" + balance_.describe() + ")";
  }
  static uint64_t stamp_of(const char*) { return 0; }  // no acknowledgement files (options.cpp)

  static int64_t balance_of(const char* img) {
    int64_t b;
    memcpy(&b, img + kBalanceOffset, 8);
    return b;
  }
  static void set_balance(char* img, int64_t b) { memcpy(img + kBalanceOffset, &b, 8); }
  // The loaded balance of a customer's savings or checking account: 100.00 to 499.99.
  static int64_t initial_balance(uint32_t table, uint64_t key) {
    return 10000 + int64_t((key * 2654435761ull + table * 40503ull) % 40000);
  }
  // Sum of every loaded balance: what check() expects all through.
  int64_t initial_total() const {
    int64_t t = 0;
    for (uint64_t k = 0; k < o_.accounts; k++) t += initial_balance(kSavings, k) + initial_balance(kChecking, k);
    return t;
  }

  // What load() counts for the progress line (each customer's three rows).
  std::pair<uint64_t, std::string> load_units() const { return {o_.accounts, "customers"}; }

  template <class Engine>
  void load(Engine& eng, int threads) const {
    parallel(threads, [&](int t) {
      auto& th = eng.thread(t);
      char acc[64] = {}, bal[16] = {};
      for (uint64_t k = uint64_t(t); k < o_.accounts; k += uint64_t(threads)) {
        memcpy(acc, &k, 8);
        snprintf(acc + 8, 24, "c%llu", (unsigned long long)k);
        eng.load(th, kAccounts, k, acc);
        memcpy(bal, &k, 8);
        set_balance(bal, initial_balance(kSavings, k));
        eng.load(th, kSavings, k, bal);
        set_balance(bal, initial_balance(kChecking, k));
        eng.load(th, kChecking, k, bal);
        load_progress(1);
      }
      for (uint64_t k = uint64_t(t); k < kTellerRows; k += uint64_t(threads)) {
        memcpy(bal, &k, 8);
        set_balance(bal, 0);
        eng.load(th, kTellers, k, bal);
      }
    });
  }

  // Total money is conserved and no savings balance is negative: {violations, total, expected,
  // examples}. Reads the current images (after a run, or after recovery).
  static constexpr const char* kCheckName = "conservation";  // the JSON key of check()
  template <class Engine>
  nlohmann::json check(Engine& eng) const {
    int64_t total = 0;
    uint64_t violations = 0, missing = 0;
    nlohmann::json examples = nlohmann::json::array();
    char img[64];
    uint64_t ver;
    auto note = [&](const std::string& what) {
      violations++;
      if (examples.size() < 10) examples.push_back(what);
    };
    for (uint64_t k = 0; k < o_.accounts; k++) {
      for (uint32_t t : {kSavings, kChecking}) {
        if (!eng.read_current(t, k, img, ver)) {
          missing++;
          note("customer " + std::to_string(k) + " has no " + (t == kSavings ? "savings" : "checking") + " row");
          continue;
        }
        total += balance_of(img);
        if (t == kSavings && balance_of(img) < 0)
          note("customer " + std::to_string(k) + " savings " + std::to_string(balance_of(img)) + " < 0");
      }
    }
    for (uint64_t k = 0; k < kTellerRows; k++) {
      if (!eng.read_current(kTellers, k, img, ver)) { missing++; note("teller " + std::to_string(k) + " missing"); continue; }
      total += balance_of(img);
    }
    int64_t expected = initial_total();
    if (total != expected) note("total " + std::to_string(total) + " != loaded " + std::to_string(expected));
    return {{"violations", violations}, {"total", total}, {"expected", expected},
            {"missing_rows", missing}, {"examples", examples}};
  }

  // Per transaction type: commits and user aborts (all phases).
  nlohmann::json report() const {
    nlohmann::json j;
    for (int i = 0; i < kTypes; i++)
      j[kTypeNames[i]] = {{"committed", committed_[size_t(i)].load()}, {"user_aborts", user_aborts_[size_t(i)].load()}};
    return {{"smallbank", j}};
  }

  uint64_t committed(Type t) const { return committed_[size_t(t)].load(); }
  uint64_t user_aborts(Type t) const { return user_aborts_[size_t(t)].load(); }

  // One customer id: the hotspot with --hotspot-share, else uniform over the other customers.
  uint64_t customer(Rng& r) const {
    uint64_t h = o_.hotspot_accounts;
    if (h >= o_.accounts || r.uniform() < o_.hotspot_share) return r.below(h);
    return h + r.below(o_.accounts - h);
  }

  // One transaction's inputs; tests set them directly.
  struct Input {
    Type type = kBalance;
    uint64_t c1 = 0, c2 = 0;
    int64_t amount = 0;
  };

  // One transaction's inputs: a type uniformly, its customers, an amount (10% of
  // TransactSaving and WriteCheck inputs are overdraft attempts).
  void draw(Rng& r, Input& in) const {
    int types = o_.send_payment ? kTypes : kTypes - 1;
    in.type = Type(r.below(uint64_t(types)));
    in.c1 = customer(r);
    in.c2 = in.c1;
    if (in.type == kAmalgamate || in.type == kSendPayment) {
      // Two distinct customers; after a few tries (a tiny hotspot) uniform over all.
      for (int i = 0; in.c2 == in.c1; i++) in.c2 = i < 8 ? customer(r) : r.below(o_.accounts);
    }
    int64_t amount = 1 + int64_t(r.below(kMaxAmount));
    bool overdraft = (in.type == kTransactSaving || in.type == kWriteCheck) && r.uniform() < kOverdraftShare;
    if (overdraft) amount = kOverdraft;
    // TransactSaving deposits; an overdraft attempt is a withdrawal.
    if (in.type == kTransactSaving && overdraft) amount = -amount;
    in.amount = amount;
  }

  // ---- The deterministic form (ENGINE=nvcaracal, system/epoch_driver.h): inputs {type, c1, c2,
  // amount, teller} drawn before the epoch; the write set follows from the type. The teller
  // row is the transaction's position mod 64 (a worker's own row in the other engines' runs):
  // with a thread count that divides 64 each teller's writers run on one core.
  uint64_t det_input_words() const { return 5; }
  uint64_t det_txn_writes() const { return 3; }
  uint64_t det_value_bytes() const { return accounts_.tuple_size(); }
  void det_draw(Rng& r, uint64_t /*epoch*/, uint64_t j, std::vector<uint64_t>& in) const {
    Input x;
    draw(r, x);
    in.insert(in.end(), {uint64_t(x.type), x.c1, x.c2, uint64_t(x.amount), (j - 1) % kTellerRows});
  }
  template <class F>
  void det_write_set(const uint64_t* in, F&& declare) const {
    uint64_t c1 = in[1], c2 = in[2], teller = in[4];
    switch (Type(in[0])) {
      case kAmalgamate: declare(kSavings, c1); declare(kChecking, c1); declare(kChecking, c2); break;
      case kBalance: break;
      case kDepositChecking: declare(kChecking, c1); declare(kTellers, teller); break;
      case kTransactSaving: declare(kSavings, c1); declare(kTellers, teller); break;
      case kWriteCheck: declare(kChecking, c1); declare(kTellers, teller); break;
      case kSendPayment: declare(kChecking, c1); declare(kChecking, c2); break;
      default: break;
    }
  }
  // Runs the Worker's transaction code on the deterministic transaction (one Worker per core
  // thread, its counts added to report() when the thread ends). A user abort may follow a
  // write() here: the epoch driver publishes a transaction's writes only when it ends.
  template <class Txn>
  bool det_run(const uint64_t* in, Txn& t) const {
    thread_local const Smallbank* owner = nullptr;
    thread_local std::unique_ptr<Worker> w;
    if (owner != this) {
      w = std::make_unique<Worker>(*this, 0);
      owner = this;
    }
    w->set({Type(in[0]), in[1], in[2], int64_t(in[3])});
    w->set_teller(in[4]);
    bool ok = w->execute(t);
    if (ok) w->acknowledged(t);
    return ok;
  }

  class Worker {
   public:
    Worker(const Smallbank& b, int tid)
        : b_(b), rng_(b.o_.seed * 1000003 + uint64_t(tid) + 17), teller_(uint64_t(tid) % kTellerRows) {}
    ~Worker() {
      for (int i = 0; i < kTypes; i++) {
        b_.committed_[size_t(i)].fetch_add(committed_[size_t(i)]);
        b_.user_aborts_[size_t(i)].fetch_add(user_aborts_[size_t(i)]);
      }
    }

    void next() { b_.draw(rng_, in_); }
    void set(const Input& in) { in_ = in; }
    void set_teller(uint64_t t) { teller_ = t % kTellerRows; }
    const Input& input() const { return in_; }

    // False: abort (a CC conflict, retried) or a user abort (m.user_aborted(), not retried).
    template <class Mgr>
    bool execute(Mgr& m) {
      switch (in_.type) {
        case kAmalgamate: return amalgamate(m);
        case kBalance: return balance(m);
        case kDepositChecking: return deposit_checking(m);
        case kTransactSaving: return transact_saving(m);
        case kWriteCheck: return write_check(m);
        case kSendPayment: return send_payment(m);
        default: return false;
      }
    }

    template <class Mgr>
    void acknowledged(Mgr&) { committed_[size_t(in_.type)]++; }

    int64_t last_balance() const { return last_balance_; }  // what Balance read

   private:
    template <class Mgr>
    bool user_abort(Mgr& m) {
      user_aborts_[size_t(in_.type)]++;
      m.user_abort();
      return false;
    }
    // Book money leaving (+) or entering (-) the bank against this worker's teller row.
    template <class Mgr>
    bool teller(Mgr& m, int64_t delta) {
      char* t = m.write(kTellers, teller_);
      if (!t) return false;
      set_balance(t, balance_of(t) + delta);
      return true;
    }

    template <class Mgr>
    bool amalgamate(Mgr& m) {
      if (!m.read(kAccounts, in_.c1) || !m.read(kAccounts, in_.c2)) return false;
      char* s1 = m.write(kSavings, in_.c1);
      if (!s1) return false;
      char* k1 = m.write(kChecking, in_.c1);
      if (!k1) return false;
      char* k2 = m.write(kChecking, in_.c2);
      if (!k2) return false;
      int64_t total = balance_of(s1) + balance_of(k1);
      set_balance(s1, 0);
      set_balance(k1, 0);
      set_balance(k2, balance_of(k2) + total);
      return true;
    }

    template <class Mgr>
    bool balance(Mgr& m) {
      if (!m.read(kAccounts, in_.c1)) return false;
      const char* s = m.read(kSavings, in_.c1);
      if (!s) return false;
      const char* k = m.read(kChecking, in_.c1);
      if (!k) return false;
      last_balance_ = balance_of(s) + balance_of(k);
      return true;
    }

    template <class Mgr>
    bool deposit_checking(Mgr& m) {
      if (!m.read(kAccounts, in_.c1)) return false;
      char* k = m.write(kChecking, in_.c1);
      if (!k) return false;
      set_balance(k, balance_of(k) + in_.amount);
      return teller(m, -in_.amount);
    }

    template <class Mgr>
    bool transact_saving(Mgr& m) {
      if (!m.read(kAccounts, in_.c1)) return false;
      char* s = m.write(kSavings, in_.c1);
      if (!s) return false;
      if (balance_of(s) + in_.amount < 0) return user_abort(m);  // would overdraw savings
      set_balance(s, balance_of(s) + in_.amount);
      return teller(m, -in_.amount);
    }

    template <class Mgr>
    bool write_check(Mgr& m) {
      if (!m.read(kAccounts, in_.c1)) return false;
      const char* s = m.read(kSavings, in_.c1);
      if (!s) return false;
      char* k = m.write(kChecking, in_.c1);
      if (!k) return false;
      int64_t funds = balance_of(s) + balance_of(k);
      if (funds - in_.amount < -kOverdraftLimit) return user_abort(m);  // would overdraw too far
      int64_t charge = in_.amount + (funds < in_.amount ? kPenalty : 0);
      set_balance(k, balance_of(k) - charge);
      return teller(m, charge);
    }

    template <class Mgr>
    bool send_payment(Mgr& m) {
      if (!m.read(kAccounts, in_.c1) || !m.read(kAccounts, in_.c2)) return false;
      char* k1 = m.write(kChecking, in_.c1);
      if (!k1) return false;
      if (balance_of(k1) < in_.amount) return user_abort(m);  // insufficient funds
      char* k2 = m.write(kChecking, in_.c2);
      if (!k2) return false;
      set_balance(k1, balance_of(k1) - in_.amount);
      set_balance(k2, balance_of(k2) + in_.amount);
      return true;
    }

    const Smallbank& b_;
    Rng rng_;
    uint64_t teller_;
    Input in_;
    int64_t last_balance_ = 0;
    std::array<uint64_t, kTypes> committed_{}, user_aborts_{};
  };

 private:
  const Options& o_;
  Schema accounts_, balance_;
  mutable std::array<std::atomic<uint64_t>, kTypes> committed_{}, user_aborts_{};
};

}  // namespace nvt
