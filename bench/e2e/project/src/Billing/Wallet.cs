using System;
using System.Collections.Generic;

namespace Shop.Billing
{
    public class Wallet
    {
        private decimal _balance;
        private readonly List<string> _history = new List<string>();

        public Wallet(decimal opening)
        {
            _balance = opening;
        }

        public decimal Balance => _balance;

        public void Deposit(decimal amount)
        {
            if (amount <= 0)
                throw new ArgumentException("amount must be positive");
            _balance += amount;
            _history.Add("deposit " + amount);
        }

        public bool TryWithdraw(decimal amount)
        {
            if (amount > _balance)
                return false;
            _balance -= amount;
            _history.Add("withdraw " + amount);
            return true;
        }
    }
}
