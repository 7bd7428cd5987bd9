#include "ledger.hpp"

void Ledger::open(int id, long amount) {
  std::lock_guard<std::mutex> lock(mutex_);
  accounts_[id].deposit(amount);
}

bool Ledger::transfer(int from, int to, long amount) {
  std::lock_guard<std::mutex> lock(mutex_);
  accounts_[from].withdraw(amount); // throws overdraft: nothing moved
  accounts_[to].deposit(amount);
  return true;
}

long Ledger::total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  long sum = 0;
  for (const auto &entry : accounts_)
    sum += entry.second.balance();
  return sum;
}

std::map<int, long> Ledger::balances() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<int, long> out;
  for (const auto &entry : accounts_)
    out[entry.first] = entry.second.balance();
  return out;
}

void run_teller(Ledger &ledger, int teller, int transfers, long &refused) {
  for (int i = 0; i < transfers; i++) {
    int from = (teller + i) % 4, to = (teller + 3 * i + 1) % 4;
    long amount = (i * 7 + teller * 13) % 50;
    try {
      ledger.transfer(from, to, amount);
    } catch (const overdraft &) {
      refused++;
    }
  }
}
