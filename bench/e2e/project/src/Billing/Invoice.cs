using System;
using System.Collections.Generic;

namespace Shop.Billing
{
    public class InvoiceLine
    {
        public string Sku { get; set; }
        public int Quantity { get; set; }
        public decimal UnitPrice { get; set; }
    }

    public class Invoice
    {
        private readonly List<InvoiceLine> _lines = new List<InvoiceLine>();
        private decimal _discountPercent;

        public void AddLine(string sku, int quantity, decimal unitPrice)
        {
            if (quantity <= 0)
                throw new ArgumentOutOfRangeException(nameof(quantity));
            _lines.Add(new InvoiceLine { Sku = sku, Quantity = quantity, UnitPrice = unitPrice });
        }

        public decimal Subtotal()
        {
            decimal sum = 0;
            foreach (var line in _lines)
                sum += line.Quantity * line.UnitPrice;
            return sum;
        }

        public void ApplyDiscount(decimal percent)
        {
            if (percent < 0 || percent > 50)
                throw new ArgumentOutOfRangeException(nameof(percent), "a discount is between 0 and 50 percent");
            _discountPercent = percent;
        }

        public decimal Total()
        {
            return Math.Round(Subtotal() * (1 - _discountPercent / 100m), 2);
        }
    }
}
