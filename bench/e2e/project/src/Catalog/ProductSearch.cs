using System;
using System.Collections.Generic;
using System.Linq;

namespace Shop.Catalog
{
    public class Product
    {
        public string Sku { get; set; }
        public string Name { get; set; }
        public decimal Price { get; set; }
        public int Stock { get; set; }
    }

    public class ProductSearch
    {
        private readonly List<Product> _products;

        public ProductSearch(IEnumerable<Product> products)
        {
            _products = products.ToList();
        }

        public IEnumerable<Product> ByName(string text)
        {
            return _products.Where(p => p.Name.IndexOf(text, StringComparison.OrdinalIgnoreCase) >= 0);
        }

        public IEnumerable<Product> InStockUnder(decimal maxPrice)
        {
            return _products.Where(p => p.Stock > 0 && p.Price <= maxPrice).OrderBy(p => p.Price);
        }
    }
}
