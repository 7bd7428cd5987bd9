#pragma once

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

struct overdraft : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename Amount> class Account {
public:
  void deposit(Amount amount) { balance_ += amount; }
  void withdraw(Amount amount) {
    if (amount > balance_)
      throw overdraft("insufficient funds");
    balance_ -= amount;
  }
  Amount balance() const { return balance_; }

private:
  Amount balance_{};
};

class Ledger {
public:
  bool transfer(int from, int to, long amount);
  void open(int id, long amount);
  long total() const;
  std::map<int, long> balances() const;

private:
  mutable std::mutex mutex_;
  std::map<int, Account<long>> accounts_;
};

void run_teller(Ledger &ledger, int teller, int transfers, long &refused);
