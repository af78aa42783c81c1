import { Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module';
import { IngressLimiter } from '../limits/ingress-limiter';
import { PaymentsIngressController } from './payments-ingress.controller';
import { PaymentsIngressService } from './payments-ingress.service';

@Module({ imports: [CatalogModule], controllers: [PaymentsIngressController], providers: [PaymentsIngressService, IngressLimiter] })
export class PaymentsModule {}
