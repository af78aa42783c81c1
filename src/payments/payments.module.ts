import { Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module';
import { PaymentsIngressController } from './payments-ingress.controller';
import { PaymentsIngressService } from './payments-ingress.service';

@Module({ imports: [CatalogModule], controllers: [PaymentsIngressController], providers: [PaymentsIngressService] })
export class PaymentsModule {}
