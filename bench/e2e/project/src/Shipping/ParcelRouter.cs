using System;

namespace Shop.Shipping
{
    public enum Carrier { Post, Courier, Freight }

    public class ParcelRouter
    {
        private const double FreightThresholdKg = 30.0;

        public Carrier ChooseCarrier(double weightKg, bool express)
        {
            if (weightKg > FreightThresholdKg)
                return Carrier.Freight;
            return express ? Carrier.Courier : Carrier.Post;
        }

        public int EstimateDays(Carrier carrier, int distanceKm)
        {
            int days = carrier == Carrier.Courier ? 1 : 2;
            days += distanceKm / 500;
            if (carrier == Carrier.Freight)
                days += 3;
            return days;
        }

        public string TrackingPrefix(Carrier carrier)
        {
            switch (carrier)
            {
                case Carrier.Courier: return "CR";
                case Carrier.Freight: return "FR";
                default: return "PO";
            }
        }
    }
}
