using System;
using System.Collections.Generic;

namespace Shop.Accounts
{
    public class SessionStore
    {
        private readonly Dictionary<string, DateTime> _expiry = new Dictionary<string, DateTime>();
        private readonly TimeSpan _lifetime = TimeSpan.FromMinutes(30);

        public string Open(string userId)
        {
            string token = userId + ":" + Guid.NewGuid().ToString("N");
            _expiry[token] = DateTime.UtcNow + _lifetime;
            return token;
        }

        public bool IsValid(string token)
        {
            return _expiry.TryGetValue(token, out var until) && until > DateTime.UtcNow;
        }

        public void Close(string token)
        {
            _expiry.Remove(token);
        }
    }
}
